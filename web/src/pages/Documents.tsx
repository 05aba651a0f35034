import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, fieldError, messageOf, rag, type Schema, uploadFile } from '../api.ts';
import { useCollections } from '../collections.ts';
import { Failure } from '../Failure.tsx';
import { ACCEPT, refusal } from '../files.ts';
import { When } from '../when.tsx';
import './documents.css';

type Doc = Schema<'Document'>;
type Job = Schema<'IngestJob'>;
type Metadata = Schema<'DocumentMetadata'>;

const isRunning = (job: Job) => job.status === 'queued' || job.status === 'processing';
const mb = (bytes: number) =>
  bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
let nextKey = 0;

/** A collection's documents, or (null) the personal space's: the same operations on two sets of routes. */
function documentsIn(collectionId: string | null) {
  if (collectionId === null) {
    return {
      list: () => call(rag.GET('/ingest/documents')),
      setMetadata: (document_id: string, metadata: Metadata) =>
        call(rag.PATCH('/ingest/documents/{document_id}', { params: { path: { document_id } }, body: { metadata } })),
      remove: (document_id: string) => call(rag.DELETE('/ingest/documents/{document_id}', { params: { path: { document_id } } })),
    };
  }
  const id = collectionId;
  return {
    list: () => call(rag.GET('/collections/{id}/documents', { params: { path: { id } } })),
    setMetadata: (document_id: string, metadata: Metadata) =>
      call(rag.PATCH('/collections/{id}/documents/{document_id}', { params: { path: { id, document_id } }, body: { metadata } })),
    remove: (document_id: string) =>
      call(rag.DELETE('/collections/{id}/documents/{document_id}', { params: { path: { id, document_id } } })),
  };
}

/**
 * The caller's own jobs here (the API lists no one else's), every second while one runs. A job that starts
 * or ends adds, changes or removes rows, so the documents are fetched again whenever a job appears or its
 * status changes (not at each chunk: the job carries the progress).
 */
function useJobs(collectionId: string | null, enabled: boolean) {
  const queries = useQueryClient();
  const jobs = useQuery({
    queryKey: ['jobs', collectionId],
    queryFn: () =>
      call(rag.GET('/ingest/jobs', { params: { query: { collection_id: collectionId ?? 'personal', limit: 100 } } })),
    enabled,
    refetchInterval: (query) => (query.state.data?.some(isRunning) ? 1000 : false),
  });
  const states = jobs.data?.map((job) => `${job.job_id}:${job.status}`).join() ?? '';
  const seen = useRef<string | null>(null);
  useEffect(() => {
    if (seen.current !== null && seen.current !== states) queries.invalidateQueries({ queryKey: ['documents', collectionId] });
    seen.current = states;
  }, [states, collectionId, queries]);
  return jobs.data ?? [];
}

type Status = 'indexed' | 'partial' | 'running' | 'failed' | 'empty';

/**
 * A document's state from the caller's newest job on it, or on a new version of it; with no job of theirs
 * (another member's upload, or one older than the jobs listed) the chunk count is all there is to go on.
 */
function stateOf(doc: Doc, jobs: Job[]): { status: Status; job?: Job; newVersion?: Job } {
  const job = jobs.find((candidate) => candidate.document_id === doc.id);
  const newVersion = jobs.find((candidate) => candidate.replaces_document_id === doc.id);
  if (!job) return { status: doc.chunk_count > 0 ? 'indexed' : 'empty', newVersion };
  if (isRunning(job)) return { status: 'running', job, newVersion };
  const ended = { succeeded: 'indexed', partial: 'partial', failed: 'failed' } as const;
  return { status: ended[job.status as keyof typeof ended], job, newVersion };
}

const STATUS_FILTERS = {
  all: () => true,
  indexed: (status: Status) => status === 'indexed' || status === 'partial',
  running: (status: Status) => status === 'running',
  problem: (status: Status) => status === 'failed' || status === 'partial',
};
type StatusFilter = keyof typeof STATUS_FILTERS;

const typeLabel = (doc: Doc) => doc.type?.toUpperCase() ?? (doc.source_kind === 'url' ? 'Web page' : '—');
/** The API answers metadata in its store's key order (shortest first): shown by key instead, the same each time. */
const entriesOf = (metadata: Metadata) => Object.entries(metadata).sort(([a], [b]) => a.localeCompare(b));
const valueText = (value: Metadata[string]) => (Array.isArray(value) ? value.join(', ') : String(value));
/** What the search box looks in: the name, the title, and every metadata key and value. */
const searchText = (doc: Doc) =>
  [doc.name, doc.title ?? '', ...Object.entries(doc.metadata).map(([key, value]) => `${key} ${valueText(value)}`)]
    .join(' ')
    .toLowerCase();

/** A job at work, as words and a bar; `subject` names what is being indexed, for the bar and the cancel button. */
function JobProgress({ job, subject, onCancel }: { job: Job; subject: string; onCancel?: () => void }) {
  const counted = job.status === 'processing' && job.chunks_total > 0;
  return (
    <span class="job">
      <span>{counted ? `Indexing: ${job.chunks_processed} of ${job.chunks_total} chunks` : 'Waiting to be read'}</span>
      <progress
        aria-label={`Indexing ${subject}`}
        value={counted ? job.chunks_processed : undefined}
        max={counted ? job.chunks_total : undefined}
      />
      {onCancel && (
        <button type="button" class="link" onClick={onCancel} aria-label={`Cancel indexing ${subject}`}>
          Cancel
        </button>
      )}
    </span>
  );
}

/** One file or URL on its way in: its bytes, then its job, then how it ended. */
interface Arrival {
  key: number;
  name: string;
  size: number | null;
  sent: number;
  jobId: string | null;
  /** The place already held these bytes: nothing new was added. */
  duplicate?: boolean;
  refused: string | null;
}

function ArrivalItem({ arrival, job }: { arrival: Arrival; job: Job | undefined }) {
  let text: string;
  let bar: { value?: number; max?: number } | null = null;
  if (arrival.refused) text = arrival.refused;
  else if (!arrival.jobId) {
    text = arrival.size === null ? 'Sending…' : `Uploading: ${mb(arrival.sent)} of ${mb(arrival.size)}`;
    bar = arrival.size === null ? {} : { value: arrival.sent, max: arrival.size };
  } else if (!job || job.status === 'queued') {
    text = 'Waiting to be read';
    bar = {};
  } else if (job.status === 'processing') {
    text = job.chunks_total ? `Indexing: ${job.chunks_processed} of ${job.chunks_total} chunks` : 'Reading';
    bar = job.chunks_total ? { value: job.chunks_processed, max: job.chunks_total } : {};
  } else if (arrival.duplicate && job.status !== 'failed')
    text = `Already here: the same file is in this list (${job.chunks_total} chunks)`;
  else if (job.status === 'succeeded') text = `Added: ${job.chunks_total} chunks`;
  else if (job.status === 'partial') text = `Added in part: ${job.error_message ?? 'some of it could not be read.'}`;
  else text = `Not added: ${job.error_message ?? 'it could not be read.'}`;
  const failed = Boolean(arrival.refused) || job?.status === 'failed';
  return (
    <li class="card" data-status={arrival.refused ? 'refused' : arrival.jobId ? (job?.status ?? 'queued') : 'uploading'}>
      <span class="grow">
        <strong class="long">{arrival.name}</strong>
        <br />
        <span class={failed ? 'error' : undefined} role={failed ? 'alert' : 'status'}>
          {text}
        </span>
      </span>
      {bar && <progress value={bar.value} max={bar.max} aria-label={`${arrival.name} progress`} />}
    </li>
  );
}

/** Files dropped or chosen, checked here before any byte is sent, and web pages by address. */
function AddDocuments({ collectionId, jobs, onStarted }: { collectionId: string | null; jobs: Job[]; onStarted: () => void }) {
  const [arrivals, setArrivals] = useState<Arrival[]>([]);
  const [dragging, setDragging] = useState(false);
  const update = (key: number, change: Partial<Arrival>) =>
    setArrivals((all) => all.map((a) => (a.key === key ? { ...a, ...change } : a)));

  function add(files: Iterable<File>) {
    for (const file of files) {
      const arrival: Arrival = { key: nextKey++, name: file.name, size: file.size, sent: 0, jobId: null, refused: refusal(file) };
      setArrivals((all) => [arrival, ...all]);
      if (arrival.refused) continue;
      uploadFile(file, { collectionId }, (sent) => update(arrival.key, { sent })).then(
        ({ job_id, duplicate }) => {
          update(arrival.key, { jobId: job_id, duplicate, sent: file.size });
          onStarted();
        },
        (error: unknown) => update(arrival.key, { refused: `${file.name}: ${messageOf(error)}` }),
      );
    }
  }

  const addUrl = useMutation({
    mutationFn: (url: string) =>
      call(rag.POST('/ingest/url', { body: collectionId ? { url, collection_id: collectionId } : { url } })),
    onSuccess: ({ job_id }, url) => {
      setArrivals((all) => [{ key: nextKey++, name: url, size: null, sent: 0, jobId: job_id, refused: null }, ...all]);
      onStarted();
    },
  });
  const urlError = fieldError(addUrl.error, 'url');

  return (
    <>
      {/* Dropping is for the mouse; the keyboard has the "Choose files" button inside. */}
      <section
        aria-label="Add files"
        class={`drop${dragging ? ' over' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault();
          setDragging(false);
          add(event.dataTransfer?.files ?? []);
        }}
      >
        <p>Drop PDF, DOCX, PPTX, XLSX, CSV, TXT or Markdown files here (50 MB each at most), or</p>
        <label class="button">
          Choose files
          <input
            type="file"
            multiple
            accept={ACCEPT}
            class="visually-hidden"
            onChange={(event) => {
              const input = event.currentTarget;
              add(input.files ?? []);
              input.value = '';
            }}
          />
        </label>
      </section>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          const form = event.currentTarget;
          addUrl.mutate(String(new FormData(form).get('url')).trim(), { onSuccess: () => form.reset() });
        }}
      >
        <label class="grow">
          Add a web page by its address
          <input
            name="url"
            type="url"
            required
            placeholder="https://example.com/article"
            aria-invalid={urlError ? true : undefined}
            aria-describedby={urlError ? 'url-error' : undefined}
          />
          {urlError && (
            <span id="url-error" class="error">
              {urlError}
            </span>
          )}
        </label>
        <button type="submit" disabled={addUrl.isPending}>
          Add page
        </button>
      </form>
      {!urlError && <Failure error={addUrl.error} />}
      {arrivals.length > 0 && (
        <ul class="cards" aria-label="Arriving">
          {arrivals.map((arrival) => (
            <ArrivalItem key={arrival.key} arrival={arrival} job={jobs.find((job) => job.job_id === arrival.jobId)} />
          ))}
        </ul>
      )}
    </>
  );
}

/** One metadata entry as edited: a list is one item per line, since an item may hold a comma. */
type Kind = 'text' | 'number' | 'boolean' | 'list';
interface Entry {
  id: number;
  key: string;
  kind: Kind;
  value: string;
}

function entryOf([key, value]: [string, Metadata[string]]): Entry {
  const id = nextKey++;
  if (Array.isArray(value)) return { id, key, kind: 'list', value: value.join('\n') };
  if (typeof value === 'number') return { id, key, kind: 'number', value: String(value) };
  if (typeof value === 'boolean') return { id, key, kind: 'boolean', value: String(value) };
  return { id, key, kind: 'text', value };
}

/** The entries as the API takes them, or what is wrong with each row that cannot be sent (the API checks the rest). */
function metadataOf(entries: Entry[]): { metadata: Metadata; problems: Map<number, string> } {
  const metadata: Metadata = {};
  const problems = new Map<number, string>();
  for (const entry of entries) {
    const key = entry.key.trim();
    const number = Number(entry.value);
    if (!key) problems.set(entry.id, 'Give this entry a key.');
    else if (Object.hasOwn(metadata, key)) problems.set(entry.id, `Another entry already has the key “${key}”.`);
    else if (entry.kind === 'number' && (entry.value.trim() === '' || !Number.isFinite(number)))
      problems.set(entry.id, 'Enter a number, such as 2025 or 0.5.');
    else if (entry.kind === 'number') metadata[key] = number;
    else if (entry.kind === 'boolean') metadata[key] = entry.value === 'true';
    else if (entry.kind === 'list')
      metadata[key] = entry.value
        .split('\n')
        .map((item) => item.trim())
        .filter(Boolean);
    else metadata[key] = entry.value;
  }
  return { metadata, problems };
}

const KINDS: [Kind, string][] = [
  ['text', 'Text'],
  ['number', 'Number'],
  ['boolean', 'Yes or no'],
  ['list', 'List (one per line)'],
];

function MetadataForm({
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
            const entry: Entry = { id: nextKey++, key: '', kind: 'text', value: '' };
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

/** Edits one document's metadata in a modal; the browser gives focus back to the button that opened it. */
function MetadataDialog({
  doc,
  save,
  onClose,
}: {
  doc: Doc | null;
  save: (doc: Doc, metadata: Metadata) => Promise<unknown>;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (doc && !dialog.current?.open) dialog.current?.showModal();
  }, [doc]);
  return (
    <dialog ref={dialog} aria-labelledby="metadata-title" class="metadata-dialog" onClose={onClose}>
      {doc && (
        <MetadataForm
          key={doc.id}
          doc={doc}
          save={async (metadata) => {
            await save(doc, metadata);
            dialog.current?.close();
          }}
          onCancel={() => dialog.current?.close()}
        />
      )}
    </dialog>
  );
}

/** Asks before documents are deleted, naming them and what goes with them. */
function DeleteDialog({ doomed, onConfirm, onClose }: { doomed: Doc[]; onConfirm: () => void; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (doomed.length > 0 && !dialog.current?.open) dialog.current?.showModal();
  }, [doomed]);
  const what = doomed.length === 1 ? `“${doomed[0]?.name}”` : plural(doomed.length, 'document');
  return (
    <dialog ref={dialog} aria-labelledby="delete-documents-title" onClose={onClose}>
      <form method="dialog" class="stack">
        <h2 id="delete-documents-title">Delete {what}?</h2>
        {doomed.length > 1 && (
          <ul class="doomed">
            {doomed.map((doc) => (
              <li key={doc.id}>{doc.name}</li>
            ))}
          </ul>
        )}
        <p>
          {doomed.length === 1 ? 'Its file and its passages are' : 'Their files and passages are'} deleted: questions no longer
          find or cite {doomed.length === 1 ? 'it' : 'them'}. This cannot be undone.
        </p>
        <div class="row">
          <button type="submit" value="keep">
            Keep {doomed.length === 1 ? 'it' : 'them'}
          </button>
          <button type="submit" value="delete" class="danger" onClick={onConfirm}>
            Delete {doomed.length === 1 ? 'document' : plural(doomed.length, 'document')}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** A new version's upload in one row: its bytes, or why it was refused. */
type Replacing = { sent: number; size: number } | { refused: string };

interface RowActions {
  manage: boolean;
  selected: boolean;
  onSelect: (selected: boolean) => void;
  onEdit: () => void;
  onReplace: (file: File) => void;
  onDelete: () => void;
  onCancel?: (job: Job) => void;
}

function StatusCell({
  doc,
  jobs,
  replacing,
  onCancel,
}: {
  doc: Doc;
  jobs: Job[];
  replacing?: Replacing;
  onCancel?: (job: Job) => void;
}) {
  const { status, job, newVersion } = stateOf(doc, jobs);
  return (
    <td data-label="Status" class="status" data-status={status}>
      {status === 'running' && job && <JobProgress job={job} subject={doc.name} onCancel={onCancel && (() => onCancel(job))} />}
      {status === 'indexed' && <span class="ok">Indexed</span>}
      {status === 'empty' && <span>No passages yet</span>}
      {status === 'partial' && <span class="error">Indexed in part: {job?.error_message}</span>}
      {status === 'failed' && <span class="error">Failed: {job?.error_message ?? 'it could not be read.'}</span>}
      {replacing && 'refused' in replacing && (
        <span role="alert" class="error">
          {replacing.refused}
        </span>
      )}
      {replacing && 'sent' in replacing && (
        <span class="job">
          <span>
            New version: {mb(replacing.sent)} of {mb(replacing.size)}
          </span>
          <progress value={replacing.sent} max={replacing.size} aria-label={`Uploading a new version of ${doc.name}`} />
        </span>
      )}
      {!replacing && newVersion && isRunning(newVersion) && (
        <span class="new-version">
          New version ({newVersion.source}):{' '}
          <JobProgress
            job={newVersion}
            subject={`the new version of ${doc.name}`}
            onCancel={onCancel && (() => onCancel(newVersion))}
          />
        </span>
      )}
      {!replacing && newVersion?.status === 'failed' && (
        <span class="error">
          New version ({newVersion.source}) not added: {newVersion.error_message ?? 'it could not be read.'}
        </span>
      )}
    </td>
  );
}

function DocumentRow({ doc, jobs, replacing, actions }: { doc: Doc; jobs: Job[]; replacing?: Replacing; actions: RowActions }) {
  const entries = entriesOf(doc.metadata);
  // The API refuses to change a document while it, or a new version of it, is being indexed (409).
  const { status, newVersion } = stateOf(doc, jobs);
  const busy =
    status === 'running' || (newVersion !== undefined && isRunning(newVersion)) || Boolean(replacing && 'sent' in replacing);
  return (
    <tr>
      {actions.manage && (
        <td class="select">
          <input
            type="checkbox"
            checked={actions.selected}
            aria-label={`Select ${doc.name}`}
            onChange={(event) => actions.onSelect(event.currentTarget.checked)}
          />
        </td>
      )}
      <td class="name">
        {doc.open_url ? (
          <a href={doc.open_url} target="_blank" rel="noopener noreferrer" class="long">
            {doc.name}
          </a>
        ) : (
          <span class="long">{doc.name}</span>
        )}
        {doc.title && doc.title !== doc.name && <span class="title long">{doc.title}</span>}
      </td>
      <StatusCell doc={doc} jobs={jobs} replacing={replacing} onCancel={actions.onCancel} />
      <td data-label="Type" class="fact">
        {typeLabel(doc)}
      </td>
      <td data-label="Size" class="fact">
        {mb(doc.size_bytes)}
      </td>
      <td data-label="Chunks" class="fact">
        {doc.chunk_count}
      </td>
      <td data-label="Metadata">
        {entries.length > 0 && (
          <ul class="metadata" aria-label={`Metadata of ${doc.name}`}>
            {entries.map(([key, value]) => (
              // A long value is cut short on screen (all of it is read out); the whole of it shows on hover.
              <li key={key} class="badge" title={`${key}: ${valueText(value)}`}>
                {key}: {valueText(value)}
              </li>
            ))}
          </ul>
        )}
      </td>
      <td data-label="Added">
        <When iso={doc.created_at} />
        {doc.document_date && (
          <span class="dated">
            Dated{' '}
            <time dateTime={doc.document_date}>
              {new Date(doc.document_date).toLocaleDateString(undefined, { dateStyle: 'medium', timeZone: 'UTC' })}
            </time>
          </span>
        )}
      </td>
      {actions.manage && (
        <td class="actions">
          <button
            type="button"
            class="secondary"
            aria-label={`Edit metadata of ${doc.name}`}
            onClick={actions.onEdit}
            disabled={busy}
          >
            Edit
          </button>
          <label class={`button secondary${busy ? ' disabled' : ''}`}>
            Replace…
            <input
              type="file"
              accept={ACCEPT}
              class="visually-hidden"
              aria-label={`Replace ${doc.name} with a new version`}
              disabled={busy}
              onChange={(event) => {
                const input = event.currentTarget;
                const file = input.files?.[0];
                input.value = '';
                if (file) actions.onReplace(file);
              }}
            />
          </label>
          <button type="button" class="danger" aria-label={`Delete ${doc.name}`} onClick={actions.onDelete}>
            Delete
          </button>
        </td>
      )}
    </tr>
  );
}

/** A column header that sorts the table by it, saying which way it is sorted now. */
function SortHeader({ label, by, sort, setSort }: { label: string; by: Sort['by']; sort: Sort; setSort: (sort: Sort) => void }) {
  const current = sort.by === by;
  return (
    <th aria-sort={current ? (sort.descending ? 'descending' : 'ascending') : undefined} class="sortable">
      <button type="button" class="link" onClick={() => setSort({ by, descending: current ? !sort.descending : by === 'date' })}>
        {label}
        <span aria-hidden="true">{current ? (sort.descending ? ' ↓' : ' ↑') : ''}</span>
      </button>
    </th>
  );
}

interface Sort {
  by: 'name' | 'date';
  descending: boolean;
}

const compare =
  ({ by, descending }: Sort) =>
  (a: Doc, b: Doc) =>
    (descending ? -1 : 1) * (by === 'name' ? a.name.localeCompare(b.name) : a.created_at.localeCompare(b.created_at));

/**
 * The documents of a collection, or (null) of the caller's personal space. `canWrite` (the owner, or a
 * member with the ingest permission) may add documents and cancel their own jobs; editing, replacing and
 * deleting are the owner's alone, as the API has it, so members with ingest do not see those controls.
 */
export function Documents({ collectionId, canWrite }: { collectionId: string | null; canWrite: boolean }) {
  const queries = useQueryClient();
  const where = documentsIn(collectionId);
  const collections = useCollections();
  const owner = collectionId === null || collections.data?.some((c) => c.id === collectionId && !c.shared) === true;
  const manage = canWrite && owner;
  const listed = useQuery({ queryKey: ['documents', collectionId], queryFn: where.list });
  const jobs = useJobs(collectionId, canWrite);
  const refresh = () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: ['documents', collectionId] }),
      queries.invalidateQueries({ queryKey: ['jobs', collectionId] }),
    ]);

  const [search, setSearch] = useState('');
  const [type, setType] = useState('');
  const [statusFilter, setStatusFilter] = useState<StatusFilter>('all');
  const [sort, setSort] = useState<Sort>({ by: 'date', descending: true });
  const [selection, setSelection] = useState(new Set<string>());
  const [editing, setEditing] = useState<Doc | null>(null);
  const [doomed, setDoomed] = useState<Doc[]>([]);
  const [replacing, setReplacing] = useState<Record<string, Replacing>>({});
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState('');
  const noticeLine = useRef<HTMLParagraphElement>(null);
  const selectAll = useRef<HTMLInputElement>(null);

  // A new version being indexed is shown in the row of the document it replaces, not as a row of its own.
  const newVersions = new Set(jobs.filter((job) => isRunning(job) && job.replaces_document_id).map((job) => job.document_id));
  const docs = (listed.data ?? []).filter((doc) => !newVersions.has(doc.id));
  const types = [...new Set(docs.map((doc) => doc.type).filter((t): t is string => t !== null))].sort();
  const words = search.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const shown = docs
    .filter((doc) => (!type || doc.type === type) && STATUS_FILTERS[statusFilter](stateOf(doc, jobs).status))
    .filter((doc) => words.every((word) => searchText(doc).includes(word)))
    .sort(compare(sort));
  const chosen = docs.filter((doc) => selection.has(doc.id));
  const allShownChosen = shown.length > 0 && shown.every((doc) => selection.has(doc.id));
  useEffect(() => {
    if (selectAll.current) selectAll.current.indeterminate = !allShownChosen && shown.some((doc) => selection.has(doc.id));
  });

  const select = (ids: string[], on: boolean) =>
    setSelection((before) => {
      const after = new Set(before);
      for (const id of ids) {
        if (on) after.add(id);
        else after.delete(id);
      }
      return after;
    });
  const say = (text: string, failure = '') => {
    setNotice(text);
    setProblem(failure);
  };

  async function saveMetadata(doc: Doc, metadata: Metadata) {
    await where.setMetadata(doc.id, metadata);
    await refresh();
    say(`Saved the metadata of ${doc.name}.`);
  }

  function replace(doc: Doc, file: File) {
    const refused = refusal(file);
    const set = (state: Replacing | null) =>
      setReplacing(({ [doc.id]: _, ...others }) => (state ? { ...others, [doc.id]: state } : others));
    if (refused) return set({ refused });
    set({ sent: 0, size: file.size });
    uploadFile(file, { collectionId, replaceDocumentId: doc.id }, (sent) => set({ sent, size: file.size })).then(
      // The job, once listed, shows the new version's progress in this row.
      () => refresh().then(() => set(null)),
      (error: unknown) => set({ refused: `${file.name} was not taken as a new version: ${messageOf(error)}` }),
    );
  }

  async function cancel(job: Job) {
    try {
      await call(rag.POST('/ingest/jobs/{job_id}/cancel', { params: { path: { job_id: job.job_id } } }));
      say(`Cancelled ${job.source}.`);
    } catch (error) {
      say('', `${job.source} could not be cancelled: ${messageOf(error)}`);
    }
    await refresh();
  }

  async function deleteDoomed() {
    const targets = doomed;
    say(`Deleting ${plural(targets.length, 'document')}…`);
    const results = await Promise.allSettled(targets.map((doc) => where.remove(doc.id)));
    const failed = targets.flatMap((doc, i) => {
      const result = results[i];
      return result?.status === 'rejected' ? [`${doc.name} (${messageOf(result.reason)})`] : [];
    });
    select(
      targets.filter((_, i) => results[i]?.status === 'fulfilled').map((doc) => doc.id),
      false,
    );
    await refresh();
    const deleted = targets.length - failed.length;
    if (failed.length === 0) say(`Deleted ${deleted === 1 ? targets[0]?.name : plural(deleted, 'document')}.`);
    else say(`Deleted ${deleted} of ${plural(targets.length, 'document')}.`, `Not deleted: ${failed.join('; ')}.`);
    // The button that opened the dialog goes with its row, or is disabled with nothing left selected: the outcome
    // takes the focus instead, where the keyboard carries on to the table.
    noticeLine.current?.focus();
  }

  const actionsOf = (doc: Doc): RowActions => ({
    manage,
    selected: selection.has(doc.id),
    onSelect: (on) => select([doc.id], on),
    onEdit: () => setEditing(doc),
    onReplace: (file) => replace(doc, file),
    onDelete: () => setDoomed([doc]),
    onCancel: canWrite ? cancel : undefined,
  });

  return (
    <section class="stack page documents" aria-labelledby="documents-title">
      <h1 id="documents-title">Documents</h1>
      {canWrite && <AddDocuments collectionId={collectionId} jobs={jobs} onStarted={refresh} />}
      <p role="status" ref={noticeLine} tabIndex={-1} class="notice">
        {notice}
      </p>
      {problem && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
      <div class="row filters">
        <label class="grow">
          Search documents
          <input
            type="search"
            value={search}
            placeholder="Name, title or metadata"
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
        </label>
        <label>
          Type
          <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
            <option value="">All types</option>
            {types.map((t) => (
              <option key={t} value={t}>
                {t.toUpperCase()}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={statusFilter} onChange={(e) => setStatusFilter(e.currentTarget.value as StatusFilter)}>
            <option value="all">Any status</option>
            <option value="indexed">Indexed</option>
            <option value="running">Being indexed</option>
            <option value="problem">Failed or incomplete</option>
          </select>
        </label>
        {manage && (
          <button type="button" class="danger" disabled={chosen.length === 0} onClick={() => setDoomed(chosen)}>
            Delete selected ({chosen.length})
          </button>
        )}
      </div>
      {listed.isPending && <p>Loading…</p>}
      <Failure error={listed.error} />
      {listed.data && docs.length === 0 && <p>No documents yet.{canWrite && ' Add files or a web page above.'}</p>}
      {docs.length > 0 && (
        <div class="table-scroll">
          <table class="documents-table">
            <caption class="visually-hidden">
              Documents:{' '}
              {shown.length === docs.length ? plural(docs.length, 'document') : `${shown.length} of ${docs.length} shown`}
            </caption>
            <thead>
              <tr>
                {manage && (
                  <th class="select">
                    <input
                      type="checkbox"
                      ref={selectAll}
                      checked={allShownChosen}
                      aria-label="Select all shown documents"
                      onChange={(event) =>
                        select(
                          shown.map((doc) => doc.id),
                          event.currentTarget.checked,
                        )
                      }
                    />
                  </th>
                )}
                <SortHeader label="Name" by="name" sort={sort} setSort={setSort} />
                <th>Status</th>
                <th>Type</th>
                <th>Size</th>
                <th>Chunks</th>
                <th>Metadata</th>
                <SortHeader label="Added" by="date" sort={sort} setSort={setSort} />
                {manage && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {shown.map((doc) => (
                <DocumentRow key={doc.id} doc={doc} jobs={jobs} replacing={replacing[doc.id]} actions={actionsOf(doc)} />
              ))}
            </tbody>
          </table>
          {shown.length === 0 && <p>No documents match.</p>}
        </div>
      )}
      <MetadataDialog doc={editing} save={saveMetadata} onClose={() => setEditing(null)} />
      <DeleteDialog doomed={doomed} onConfirm={deleteDoomed} onClose={() => setDoomed([])} />
    </section>
  );
}
