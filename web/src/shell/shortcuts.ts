import { useEffect } from 'preact/hooks';

/** The keys, as the help lists them and the handler reads them. */
export const SHORTCUTS = [
  { keys: 'Ctrl+Shift+O', what: 'New chat' },
  { keys: '/', what: 'Focus the question' },
  { keys: 'Esc', what: 'Stop the answer' },
] as const;

/** The chat listens for this to stop its answer: the shortcut need not know which chat is streaming. */
export const STOP_EVENT = 'rag:stop';

const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));

/** The app's keyboard shortcuts, for the whole page while it is mounted. */
export function useShortcuts(onNewChat: () => void) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.shiftKey && event.key.toLowerCase() === 'o') {
        event.preventDefault();
        onNewChat();
      } else if (event.key === '/' && !typing(event.target) && !event.ctrlKey && !event.metaKey && !event.altKey) {
        const question = document.getElementById('question');
        if (question) {
          event.preventDefault();
          question.focus();
        }
      } else if (event.key === 'Escape' && !document.querySelector('dialog[open]')) {
        document.dispatchEvent(new Event(STOP_EVENT));
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onNewChat]);
}
