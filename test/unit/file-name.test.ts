import { describe, expect, it } from 'vitest';
import { safeFilename } from '../../src/api/uploads/file-name.ts';

const hex = (code: number) => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;

describe('the name an upload is shown under', () => {
  const bidi = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c];
  it.each(bidi.map((code) => [hex(code), code]))('drops the bidi control %s', (_, code) => {
    expect(safeFilename(`invoice${String.fromCodePoint(code as number)}fdp.exe`)).toBe('invoicefdp.exe');
  });

  it('an override cannot disguise the extension', () => {
    // Shown as "report_exe.pdf" where the override is honoured; it is an .exe.
    expect(safeFilename('report_\u202Efdp.exe')).toBe('report_fdp.exe');
    // Sent percent-encoded in filename*=UTF-8''…, as browsers do for non-ASCII names.
    expect(safeFilename('report_%E2%80%AEfdp.exe')).toBe('report_fdp.exe');
  });

  it.each([
    ['zero-width space', '\u200B'],
    ['word joiner', '\u2060'],
    ['byte order mark', '\uFEFF'],
    ['soft hyphen', '\u00AD'],
    ['invisible separator', '\u2063'],
    ['line separator', '\u2028'],
    ['paragraph separator', '\u2029'],
    ['C1 control', '\u0085'],
    ['NUL', '\u0000'],
    ['tab', '\t'],
  ])('drops the invisible %s', (_, ch) => {
    expect(safeFilename(`no${ch}tes.md`)).toBe('notes.md');
  });

  it.each([
    ['right-to-left letters', 'تقرير سنوي.pdf'],
    ['Hebrew', 'דוח.docx'],
    ['a zero-width non-joiner in Persian', 'می\u200Cخواهم.txt'],
    ['a zero-width joiner in an emoji', '👩\u200D💻 notes.md'],
    ['accents', 'Café résumé.pdf'],
  ])('keeps %s', (_, name) => {
    expect(safeFilename(name)).toBe(name);
  });

  it('keeps only the last path segment and at most 255 characters, never half of one', () => {
    expect(safeFilename('C:\\Users\\me\\report.pdf')).toBe('report.pdf');
    expect(safeFilename('../../etc/passwd.txt')).toBe('passwd.txt');
    const long = safeFilename(`${'😀'.repeat(300)}.txt`);
    expect([...long]).toHaveLength(255);
    expect(long).toBe('😀'.repeat(255));
  });

  it('a name of nothing but invisible characters is refused', () => {
    expect(() => safeFilename('\u202E\u200B\u2066 ')).toThrow(/no name/);
  });
});
