/**
 * Numbers as a reader of the spreadsheet sees them: dates and times from serial day numbers,
 * percentages, and doubles without their binary noise. Shared by worksheet cells and the
 * values cached in charts.
 */

export type NumberKind = 'number' | 'date' | 'time' | 'datetime' | 'percent';

export function formatNumber(n: number, kind: NumberKind, date1904 = false): string {
  if (kind === 'percent') return `${trimFloat(n * 100)}%`;
  if (kind === 'number' || n < 0 || n > 2_958_465) return trimFloat(n);
  // Serial day numbers: the 1900 system counts a 29 Feb 1900 that never was (a Lotus bug).
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : n < 60 ? Date.UTC(1899, 11, 31) : Date.UTC(1899, 11, 30);
  const ms = epoch + Math.round(n * 86_400) * 1000;
  const iso = new Date(ms).toISOString();
  const date = iso.slice(0, 10);
  const time = iso.slice(11, 19);
  if (kind === 'time') return time;
  if (kind === 'datetime' && time !== '00:00:00') return `${date}T${time}`;
  return date;
}

function trimFloat(n: number): string {
  // Spreadsheets store binary doubles (0.1 + 0.2 → 0.30000000000000004); show what Excel shows.
  return String(Number(n.toPrecision(15)));
}

// Excel's own limit on a format code; a longer one is cut before any matching.
const MAX_FORMAT_CODE = 255;

export function formatKind(code: string): NumberKind {
  // Quoted literals, escapes and bracketed colours/locales are not date parts; [h], [mm], [ss] are.
  const stripped = code
    .slice(0, MAX_FORMAT_CODE)
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/\[(?![hms]+\])[^[\]]*\]/gi, '')
    .split(';')[0]!
    .toLowerCase();
  if (stripped.includes('%')) return 'percent';
  if (stripped === 'general' || !/[dmyhs]/.test(stripped)) return 'number';
  if (/[dy]/.test(stripped) || (/m/.test(stripped) && !/[hs]/.test(stripped))) return /[hs]/.test(stripped) ? 'datetime' : 'date';
  return 'time';
}
