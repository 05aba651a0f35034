/** Times in words: "3 minutes ago", "in 2 hours", with the exact time on hover. */
const words = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Number.POSITIVE_INFINITY],
];

/** How far `iso` is from now, in the largest unit that keeps it under one of the next. */
export function relative(iso: string, now = Date.now()): string {
  let amount = (Date.parse(iso) - now) / 1000;
  if (Math.abs(amount) < 45) return amount <= 0 ? 'just now' : 'in a few seconds';
  for (const [unit, size] of STEPS) {
    if (Math.abs(amount) < size) return words.format(Math.round(amount), unit);
    amount /= size;
  }
  return words.format(Math.round(amount), 'year');
}

/** A time in words (or, with `date`, its day), the exact date and time in its title. */
export function When({ iso, date = false }: { iso: string; date?: boolean }) {
  const at = new Date(iso);
  return (
    <time dateTime={iso} title={at.toLocaleString()}>
      {date ? at.toLocaleDateString(undefined, { dateStyle: 'medium' }) : relative(iso)}
    </time>
  );
}
