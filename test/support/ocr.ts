/** How OCR output is judged against scan-linn-2col.groundtruth.txt. */

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** Character error rate with whitespace runs collapsed: layout spacing is not what OCR is judged on. */
export function characterErrorRate(recognized: string, truth: string): number {
  const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
  return levenshtein(norm(recognized), norm(truth)) / norm(truth).length;
}
