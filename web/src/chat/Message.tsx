import { CopyButton } from '../Copy.tsx';
import { Markdown } from '../markdown/Markdown.tsx';
import type { Source } from '../source/place.ts';
import { Feedback } from './Feedback.tsx';

/** One message as the chat shows it: a question, or an answer with its sources and record. */
export interface Shown {
  key: string;
  role: 'user' | 'assistant';
  content: string;
  sources: Source[];
  evaluationId: string | null;
  feedback: 'up' | 'down' | null;
  /** While streaming, and when the answer was stopped or failed. */
  note?: string;
  streaming?: boolean;
}

interface Props {
  message: Shown;
  /** The last answer can be asked again. */
  onRegenerate?: () => void;
  onCite: (n: number) => void;
}

export function Message({ message, onRegenerate, onCite }: Props) {
  if (message.role === 'user') {
    return (
      <li class="message user">
        <h2 class="visually-hidden">You asked</h2>
        <p>{message.content}</p>
      </li>
    );
  }
  return (
    <li class="message assistant" aria-busy={message.streaming ? 'true' : undefined}>
      <h2 class="visually-hidden">Answer</h2>
      <div class="answer">
        <Markdown text={message.content} sources={message.sources} onCite={onCite} />
      </div>
      {message.note && <p class="note">{message.note}</p>}
      {!message.streaming && (
        <div class="row tight actions">
          {message.sources.length > 0 && (
            <button type="button" class="secondary" onClick={() => onCite(1)}>
              Sources ({message.sources.length})
            </button>
          )}
          {message.content && <CopyButton text={message.content} what="answer" />}
          {onRegenerate && (
            <button type="button" class="secondary" onClick={onRegenerate}>
              Regenerate
            </button>
          )}
          {message.evaluationId && <Feedback evaluationId={message.evaluationId} initial={message.feedback} />}
        </div>
      )}
    </li>
  );
}
