/** A thumb drawn, not an emoji: it looks the same on every system, emoji font or not, and takes the text colour. */
export function Thumb({ down = false }: { down?: boolean }) {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" class={down ? 'thumb down' : 'thumb'}>
      <path
        d="M2 10h4v11H2z M8 21h9.5a2 2 0 0 0 2-1.6l1.4-7A2 2 0 0 0 19 10h-5.5l.9-4.3a1.8 1.8 0 0 0-3.2-1.5L8 9.5z"
        fill="none"
        stroke="currentColor"
        stroke-width="1.8"
        stroke-linejoin="round"
      />
    </svg>
  );
}
