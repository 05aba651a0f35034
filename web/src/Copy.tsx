import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** Copies `text` to the clipboard, and says so; where the browser refuses, says how to copy by hand. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  useEffect(() => setCopied(null), [text]);
  return (
    <>
      <button
        type="button"
        class="secondary"
        aria-label={`Copy the ${what}`}
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
      <span role="status" class={copied === false ? 'hint' : 'visually-hidden'}>
        {copied === true && `The ${what} is copied.`}
        {copied === false && `The browser would not copy it: select the ${what} and copy it with Ctrl+C or ⌘C.`}
      </span>
    </>
  );
}

/**
 * A secret the API returns once (an API key, a webhook's signing secret): in a box that says so, with
 * a Copy button. It takes the focus when it appears, so that keyboard and screen-reader users land on it.
 */
export function ShownOnce({
  title,
  label,
  what,
  value,
  onDone,
  children,
}: {
  title: string;
  label: string;
  /** What it is, in a sentence: "the API key is copied". */
  what: string;
  value: string;
  onDone: () => void;
  children?: ComponentChildren;
}) {
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), [value]);
  return (
    <section class="shown-once stack" aria-label={title}>
      <h3>{title}</h3>
      <p>
        <strong>Copy it now: it will not be shown again.</strong>
      </p>
      <div class="row">
        <label class="grow">
          {label}
          <input
            ref={field}
            readOnly
            value={value}
            class="code"
            spellcheck={false}
            onFocus={(event) => event.currentTarget.select()}
          />
        </label>
        <CopyButton text={value} what={what} />
      </div>
      {children}
      <p>
        <button type="button" class="link" onClick={onDone}>
          I have copied it: hide it
        </button>
      </p>
    </section>
  );
}
