import type { ComponentChildren } from 'preact';
import { ACCEPT } from '../files.ts';

/**
 * A button that chooses files of the types the service takes: a label around a hidden input. The input is emptied
 * once read, so that choosing the same file again still counts as a change.
 */
export function FileButton({
  children,
  label,
  secondary = false,
  multiple = false,
  disabled = false,
  onFiles,
}: {
  children: ComponentChildren;
  label?: string;
  secondary?: boolean;
  multiple?: boolean;
  disabled?: boolean;
  onFiles: (files: File[]) => void;
}) {
  return (
    <label class={`button${secondary ? ' secondary' : ''}${disabled ? ' disabled' : ''}`}>
      {children}
      <input
        type="file"
        multiple={multiple}
        accept={ACCEPT}
        class="visually-hidden"
        aria-label={label}
        disabled={disabled}
        onChange={(event) => {
          const input = event.currentTarget;
          const files = [...(input.files ?? [])];
          input.value = '';
          onFiles(files);
        }}
      />
    </label>
  );
}
