import { useRef, useState } from 'preact/hooks';
import { fieldError } from '../api.ts';
import { Failure } from '../Failure.tsx';
import type { Doc, Metadata } from './api.ts';
import { type Entry, emptyEntry, entriesOf, entryOf, KINDS, type Kind, metadataOf } from './metadata.ts';

/** A document's metadata as typed entries, checked here first; the API's refusals are shown beside the entry they name. */
export function MetadataForm({
  doc,
  save,
  onCancel,
}: {
  doc: Doc;
  save: (metadata: Metadata) => Promise<unknown>;
  onCancel: () => void;
}) {
  const [entries, setEntries] = useState(() => entriesOf(doc.metadata).map(entryOf));
  const [problems, setProblems] = useState(new Map<number, string>());
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  const focusEntry = useRef<number | null>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const change = (id: number, patch: Partial<Entry>) =>
    setEntries((all) => all.map((entry) => (entry.id === id ? { ...entry, ...patch } : entry)));
  // The API names a refused value by its key (`loc` ends with it), or the whole object as `metadata`.
  const problemOf = (entry: Entry) => problems.get(entry.id) ?? fieldError(error, entry.key.trim());
  const placed = entries.some((entry) => fieldError(error, entry.key.trim()));

  async function submit(event: Event) {
    event.preventDefault();
    const { metadata, problems: found } = metadataOf(entries);
    setProblems(found);
    setError(null);
    if (found.size > 0) return;
    setSaving(true);
    try {
      await save(metadata);
    } catch (refused) {
      setError(refused);
    } finally {
      setSaving(false);
    }
  }

  return (
    <form class="stack" onSubmit={submit} noValidate>
      <h2 id="metadata-title">Metadata of {doc.name}</h2>
      <p class="hint">Searches can be filtered on these. Keys are letters, digits and _ (up to 64 characters).</p>
      {entries.length === 0 && <p>No metadata yet.</p>}
      {entries.map((entry, index) => {
        const problem = problemOf(entry);
        const problemId = `metadata-problem-${entry.id}`;
        const valueId = `metadata-value-${entry.id}`;
        const described = problem ? { 'aria-invalid': true, 'aria-describedby': problemId } : {};
        return (
          <fieldset key={entry.id} class="entry">
            <legend class="visually-hidden">Entry {index + 1}</legend>
            <label>
              Key
              <input
                value={entry.key}
                maxLength={64}
                ref={(input) => {
                  if (input && focusEntry.current === entry.id) {
                    input.focus();
                    focusEntry.current = null;
                  }
                }}
                onInput={(event) => change(entry.id, { key: event.currentTarget.value })}
                {...described}
              />
            </label>
            <label>
              Type
              <select
                value={entry.kind}
                onChange={(event) => {
                  const kind = event.currentTarget.value as Kind;
                  // Text typed in stays when only its type changes; yes-or-no has values of its own.
                  const value = kind === 'boolean' ? 'true' : entry.kind === 'boolean' ? '' : entry.value;
                  change(entry.id, { kind, value });
                }}
              >
                {KINDS.map(([kind, label]) => (
                  <option key={kind} value={kind}>
                    {label}
                  </option>
                ))}
              </select>
            </label>
            <label class="value" for={valueId}>
              Value
              {entry.kind === 'boolean' ? (
                <select
                  id={valueId}
                  value={entry.value}
                  onChange={(event) => change(entry.id, { value: event.currentTarget.value })}
                >
                  <option value="true">Yes</option>
                  <option value="false">No</option>
                </select>
              ) : entry.kind === 'list' ? (
                <textarea
                  id={valueId}
                  rows={3}
                  value={entry.value}
                  onInput={(event) => change(entry.id, { value: event.currentTarget.value })}
                  {...described}
                />
              ) : (
                <input
                  id={valueId}
                  value={entry.value}
                  inputMode={entry.kind === 'number' ? 'decimal' : undefined}
                  maxLength={512}
                  onInput={(event) => change(entry.id, { value: event.currentTarget.value })}
                  {...described}
                />
              )}
            </label>
            <button
              type="button"
              class="danger"
              aria-label={`Remove entry ${index + 1}`}
              onClick={() => {
                setEntries((all) => all.filter((other) => other.id !== entry.id));
                addButton.current?.focus();
              }}
            >
              Remove
            </button>
            {problem && (
              <p id={problemId} class="error">
                {problem}
              </p>
            )}
          </fieldset>
        );
      })}
      <div>
        <button
          type="button"
          class="secondary"
          ref={addButton}
          onClick={() => {
            const entry = emptyEntry();
            focusEntry.current = entry.id;
            setEntries((all) => [...all, entry]);
          }}
        >
          Add an entry
        </button>
      </div>
      {!placed && <Failure error={error} />}
      <div class="row">
        <button type="submit" disabled={saving}>
          Save metadata
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
