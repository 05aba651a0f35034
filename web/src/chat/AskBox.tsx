import { useQueries } from '@tanstack/preact-query';
import { DOC_TYPES } from '../../../src/core/contracts/doc-types.ts';
import type { Schema } from '../api.ts';
import type { Listed } from '../collections.ts';
import { documentsIn, documentsKey } from '../documents/api.ts';

/** What a question carries besides its text: the advanced control's choices. */
export interface Asking {
  filter?: Schema<'Filter'>;
  rerank?: boolean;
}

// The types a filter can name: every document type.
const TYPES: readonly string[] = DOC_TYPES;
const MAX_COLLECTIONS = 10;

/** A metadata value as typed: a number matches numbers, anything else matches text. */
const metadataValue = (text: string) => (text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text);

function filterOf(types: string[], documents: string[], pairs: [string, string][]): Schema<'Filter'> | undefined {
  const parts: Schema<'Filter'>[] = [];
  if (types.length > 0) parts.push({ type: { in: types } });
  if (documents.length > 0) parts.push({ document_id: { in: documents } });
  for (const [key, value] of pairs) if (key.trim()) parts.push({ [`metadata.${key.trim()}`]: metadataValue(value) });
  if (parts.length === 0) return undefined;
  return parts.length === 1 ? parts[0] : { and: parts };
}

function CollectionChooser({
  collections,
  chosen,
  locked,
  onChange,
}: {
  collections: Listed[];
  chosen: string[];
  /** The chat's own collection: a chat's questions always search it. */
  locked: string | null;
  onChange: (chosen: string[]) => void;
}) {
  const names = chosen.map((id) => collections.find((c) => c.id === id)?.name ?? '…');
  return (
    <details class="chooser">
      <summary>
        <span class="visually-hidden">Ask in: </span>
        {names.length === 0 ? 'Personal space' : names.join(', ')}
      </summary>
      <fieldset class="popover">
        <legend>Ask in</legend>
        {locked === null && (
          <label class="check">
            <input type="checkbox" checked={chosen.length === 0} onChange={() => onChange([])} />
            Personal space (alone)
          </label>
        )}
        {collections.map((collection) => {
          const on = chosen.includes(collection.id);
          return (
            <label class="check" key={collection.id}>
              <input
                type="checkbox"
                checked={on}
                disabled={collection.id === locked || (!on && chosen.length >= MAX_COLLECTIONS)}
                onChange={() => onChange(on ? chosen.filter((id) => id !== collection.id) : [...chosen, collection.id])}
              />
              {collection.name}
            </label>
          );
        })}
        <p class="hint">Up to {MAX_COLLECTIONS} collections; their passages compete on one scale.</p>
      </fieldset>
    </details>
  );
}

/** The documents of the places asked in, to narrow a question to some of them. */
function useDocumentsOf(chosen: string[]) {
  const places = chosen.length > 0 ? chosen : [null];
  return useQueries({
    queries: places.map((place) => ({ queryKey: documentsKey(place), queryFn: documentsIn(place).list })),
    combine: (results) => results.flatMap((result) => result.data ?? []),
  });
}

/** The advanced control's state; `askingOf` turns it into what a question carries. */
export type Choices = { types: string[]; documents: string[]; pairs: [string, string][]; rerank: '' | 'on' | 'off' };
export const NO_CHOICES: Choices = { types: [], documents: [], pairs: [['', '']], rerank: '' };

export const askingOf = ({ types, documents, pairs, rerank }: Choices): Asking => ({
  filter: filterOf(types, documents, pairs),
  ...(rerank === '' ? {} : { rerank: rerank === 'on' }),
});

function Advanced({ chosen, choices, onChange }: { chosen: string[]; choices: Choices; onChange: (choices: Choices) => void }) {
  const { types, documents, pairs, rerank } = choices;
  const available = useDocumentsOf(chosen);
  const update = (change: Partial<Choices>) => onChange({ ...choices, ...change });
  const active = types.length > 0 || documents.length > 0 || pairs.some(([key]) => key.trim()) || rerank !== '';
  return (
    <details class="advanced">
      <summary>Advanced{active ? ' (on)' : ''}</summary>
      <div class="popover stack">
        <fieldset>
          <legend>Only these types</legend>
          <div class="row tight">
            {TYPES.map((type) => (
              <label class="check" key={type}>
                <input
                  type="checkbox"
                  checked={types.includes(type)}
                  onChange={() => update({ types: types.includes(type) ? types.filter((t) => t !== type) : [...types, type] })}
                />
                {type}
              </label>
            ))}
          </div>
        </fieldset>
        {available.length > 0 && (
          <label>
            Only these documents
            <select
              multiple
              size={Math.min(6, available.length)}
              onChange={(event) => update({ documents: [...event.currentTarget.selectedOptions].map((option) => option.value) })}
            >
              {available.map((doc) => (
                <option key={doc.id} value={doc.id} selected={documents.includes(doc.id)}>
                  {doc.title && doc.title !== doc.name ? `${doc.name}: ${doc.title}` : doc.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <fieldset class="stack-tight">
          <legend>Only documents whose metadata has</legend>
          {pairs.map(([key, value], i) => (
            <div class="row tight" key={i}>
              <label class="grow">
                Key
                <input
                  value={key}
                  placeholder="company"
                  onInput={(event) => update({ pairs: pairs.map((p, j) => (j === i ? [event.currentTarget.value, p[1]] : p)) })}
                />
              </label>
              <label class="grow">
                Value
                <input
                  value={value}
                  placeholder="Acme"
                  onInput={(event) => update({ pairs: pairs.map((p, j) => (j === i ? [p[0], event.currentTarget.value] : p)) })}
                />
              </label>
            </div>
          ))}
          <button type="button" class="link" onClick={() => update({ pairs: [...pairs, ['', '']] })}>
            Add a condition
          </button>
        </fieldset>
        <label>
          Reranking
          <select value={rerank} onChange={(event) => update({ rerank: event.currentTarget.value as '' | 'on' | 'off' })}>
            <option value="">As the collection says</option>
            <option value="on">On: reorder with the reranking model</option>
            <option value="off">Off</option>
          </select>
        </label>
      </div>
    </details>
  );
}

interface Props {
  collections: Listed[];
  chosen: string[];
  locked: string | null;
  onChoose: (chosen: string[]) => void;
  choices: Choices;
  onChoices: (choices: Choices) => void;
  streaming: boolean;
  onAsk: (question: string) => void;
  onStop: () => void;
}

/** The question, where to ask it, and the advanced choices; Enter sends, Shift+Enter starts a new line. */
export function AskBox({ collections, chosen, locked, onChoose, choices, onChoices, streaming, onAsk, onStop }: Props) {
  const send = (form: HTMLFormElement) => {
    const question = String(new FormData(form).get('question')).trim();
    if (!question || streaming) return;
    form.reset();
    onAsk(question);
  };
  return (
    <form
      class="ask-box stack-tight"
      onSubmit={(event) => {
        event.preventDefault();
        send(event.currentTarget);
      }}
    >
      <label for="question" class="visually-hidden">
        Your question
      </label>
      <textarea
        id="question"
        name="question"
        rows={2}
        maxLength={5000}
        required
        placeholder="Ask a question about your documents"
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
            event.preventDefault();
            const form = event.currentTarget.form;
            if (form) send(form);
          }
        }}
      />
      <div class="row tight ask-controls">
        <CollectionChooser collections={collections} chosen={chosen} locked={locked} onChange={onChoose} />
        <Advanced chosen={chosen} choices={choices} onChange={onChoices} />
        <span class="grow" />
        {streaming ? (
          <button type="button" class="danger" onClick={onStop}>
            Stop
          </button>
        ) : (
          <button type="submit">Ask</button>
        )}
      </div>
    </form>
  );
}
