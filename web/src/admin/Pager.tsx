/** Earlier and later pages of a list the API answers `limit` at a time, with the rows shown in words. */
export function Pager({
  offset,
  shown,
  limit,
  what,
  onOffset,
}: {
  offset: number;
  shown: number;
  limit: number;
  what: string;
  onOffset: (offset: number) => void;
}) {
  // A page as long as the limit may have more after it; a shorter one is the last.
  if (offset === 0 && shown < limit) return null;
  return (
    <nav class="row tight" aria-label={`Pages of ${what}`}>
      <button type="button" class="secondary" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span>{shown === 0 ? 'None here' : `${offset + 1}–${offset + shown}`}</span>
      <button type="button" class="secondary" disabled={shown < limit} onClick={() => onOffset(offset + limit)}>
        Next
      </button>
    </nav>
  );
}
