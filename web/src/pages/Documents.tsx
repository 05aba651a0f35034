import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { api, messageOf, uploadFile } from '../api.ts';
import { Failure } from '../Failure.tsx';
import { ACCEPT, refusal } from '../files.ts';

interface Document {
  id: string;
  name: string;
  source_kind: 'upload' | 'url';
  size_bytes: number;
  chunk_count: number;
  created_at: string;
  open_url: string | null;
}

interface Job {
  status: 'queued' | 'processing' | 'succeeded' | 'partial' | 'failed';
  chunks_processed: number;
  chunks_total: number;
  error_message: string | null;
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

const TERMINAL = new Set(['succeeded', 'partial', 'failed']);
const mb = (bytes: number) =>
  bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
let nextKey = 0;

/** Where a document lives: a collection's list, or the caller's personal space. */
const paths = (collectionId: string | null) =>
  collectionId
    ? { list: `/collections/${collectionId}/documents`, one: (id: string) => `/collections/${collectionId}/documents/${id}` }
    : { list: '/ingest/documents', one: (id: string) => `/ingest/documents/${id}` };

function ArrivalRow({ arrival, onDone }: { arrival: Arrival; onDone: () => void }) {
  const job = useQuery({
    queryKey: ['job', arrival.jobId],
    queryFn: async () => {
      const found = await api<Job>('GET', `/ingest/jobs/${arrival.jobId}`);
      if (TERMINAL.has(found.status)) onDone();
      return found;
    },
    enabled: arrival.jobId !== null,
    refetchInterval: (query) => (query.state.data && TERMINAL.has(query.state.data.status) ? false : 1000),
  });
  const state = job.data;
  let text: string;
  let value: number | undefined;
  let max: number | undefined;
  if (arrival.refused) text = arrival.refused;
  else if (!arrival.jobId) {
    text = arrival.size === null ? 'Sending…' : `Uploading: ${mb(arrival.sent)} of ${mb(arrival.size)}`;
    [value, max] = arrival.size === null ? [undefined, undefined] : [arrival.sent, arrival.size];
  } else if (job.error) text = messageOf(job.error);
  else if (!state || state.status === 'queued') text = 'Waiting to be read';
  else if (state.status === 'processing') {
    text = state.chunks_total ? `Indexing: ${state.chunks_processed} of ${state.chunks_total} chunks` : 'Reading';
    [value, max] = state.chunks_total ? [state.chunks_processed, state.chunks_total] : [undefined, undefined];
  } else if (arrival.duplicate && state.status !== 'failed')
    text = `Already here: the same file is in this list (${state.chunks_total} chunks)`;
  else if (state.status === 'succeeded') text = `Added: ${state.chunks_total} chunks`;
  else if (state.status === 'partial') text = `Added in part: ${state.error_message ?? 'some of it could not be read.'}`;
  else text = `Not added: ${state.error_message ?? 'it could not be read.'}`;
  const failed = Boolean(arrival.refused) || state?.status === 'failed';
  return (
    <li class="card" data-status={arrival.refused ? 'refused' : (state?.status ?? 'uploading')}>
      <span class="grow">
        <strong>{arrival.name}</strong>
        <br />
        <span class={failed ? 'error' : undefined} role={failed ? 'alert' : 'status'}>
          {text}
        </span>
      </span>
      {!arrival.refused && !(state && TERMINAL.has(state.status)) && (
        <progress value={value} max={max} aria-label={`${arrival.name} progress`} />
      )}
    </li>
  );
}

export function Documents({ collectionId }: { collectionId: string | null }) {
  const queries = useQueryClient();
  const where = paths(collectionId);
  const listed = useQuery({ queryKey: ['documents', collectionId], queryFn: () => api<Document[]>('GET', where.list) });
  const refresh = () => queries.invalidateQueries({ queryKey: ['documents', collectionId] });
  const remove = useMutation({ mutationFn: (id: string) => api('DELETE', where.one(id)), onSuccess: refresh });
  const [arrivals, setArrivals] = useState<Arrival[]>([]);
  const [dragging, setDragging] = useState(false);
  const update = (key: number, change: Partial<Arrival>) =>
    setArrivals((all) => all.map((a) => (a.key === key ? { ...a, ...change } : a)));

  function add(files: Iterable<File>) {
    for (const file of files) {
      const arrival: Arrival = { key: nextKey++, name: file.name, size: file.size, sent: 0, jobId: null, refused: refusal(file) };
      setArrivals((all) => [arrival, ...all]);
      if (arrival.refused) continue;
      uploadFile(file, collectionId, (sent) => update(arrival.key, { sent })).then(
        ({ job_id, duplicate }) => update(arrival.key, { jobId: job_id, duplicate, sent: file.size }),
        (error: unknown) => update(arrival.key, { refused: `${file.name}: ${messageOf(error)}` }),
      );
    }
  }

  const addUrl = useMutation({
    mutationFn: (url: string) =>
      api<{ job_id: string }>('POST', '/ingest/url', collectionId ? { url, collection_id: collectionId } : { url }),
    onSuccess: ({ job_id }, url) =>
      setArrivals((all) => [{ key: nextKey++, name: url, size: null, sent: 0, jobId: job_id, refused: null }, ...all]),
  });

  return (
    <section aria-labelledby="documents-title" class="stack">
      <h2 id="documents-title">Documents</h2>
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
          <input name="url" type="url" required placeholder="https://example.com/article" />
        </label>
        <button type="submit" disabled={addUrl.isPending}>
          Add page
        </button>
      </form>
      <Failure error={addUrl.error} />
      {arrivals.length > 0 && (
        <ul class="cards" aria-label="Arriving">
          {arrivals.map((arrival) => (
            <ArrivalRow key={arrival.key} arrival={arrival} onDone={refresh} />
          ))}
        </ul>
      )}
      {listed.isPending && <p>Loading…</p>}
      <Failure error={listed.error} />
      {listed.data?.length === 0 && <p>No documents yet.</p>}
      <ul class="cards" aria-label="Documents">
        {listed.data?.map((doc) => (
          <li key={doc.id} class="card">
            <span class="grow">
              {doc.open_url ? (
                <a href={doc.open_url} target="_blank" rel="noopener noreferrer">
                  {doc.name}
                </a>
              ) : (
                doc.name
              )}{' '}
              <span class="badge">
                {mb(doc.size_bytes)} · {doc.chunk_count} chunks
              </span>
            </span>
            <button type="button" class="danger" aria-label={`Delete ${doc.name}`} onClick={() => remove.mutate(doc.id)}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      <Failure error={remove.error} />
    </section>
  );
}
