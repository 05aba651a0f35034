import { messageOf } from './api.ts';

/** A failure, in words, announced to screen readers; nothing when there is none. */
export function Failure({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" class="error">
      {messageOf(error)}
    </p>
  );
}
