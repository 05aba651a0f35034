/**
 * Light or dark: the reader's choice, kept in this browser, or else the system's. The choice is resolved here
 * into <html data-theme>, so the stylesheet needs one set of dark colours, and a change of the system's setting
 * shows at once.
 */
export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'rag-theme';
const dark = () => matchMedia('(prefers-color-scheme: dark)');

export function themeChoice(): ThemeChoice {
  const stored = localStorage.getItem(KEY);
  return stored === 'light' || stored === 'dark' ? stored : 'system';
}

function apply(choice: ThemeChoice) {
  const resolved = choice === 'system' ? (dark().matches ? 'dark' : 'light') : choice;
  document.documentElement.dataset.theme = resolved;
}

export function chooseTheme(choice: ThemeChoice) {
  if (choice === 'system') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, choice);
  apply(choice);
}

/** Once, before the first render. */
export function startTheme() {
  apply(themeChoice());
  dark().addEventListener('change', () => apply(themeChoice()));
}
