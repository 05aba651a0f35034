import { useMutation } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { fieldError, messageOf, uploadFile } from '../api.ts';
import { Failure } from '../Failure.tsx';
import { refusal } from '../files.ts';
import { type Arrival, Arrivals } from './Arrivals.tsx';
import { addUrl, type Job } from './api.ts';
import { FileButton } from './FileButton.tsx';

let nextArrivalKey = 0;

/** Files dropped or chosen, checked here before any byte is sent, and web pages by address. */
export function AddDocuments({
  collectionId,
  jobs,
  onStarted,
}: {
  collectionId: string | null;
  jobs: Job[];
  onStarted: () => void;
}) {
  const [arrivals, setArrivals] = useState<Arrival[]>([]);
  const [dragging, setDragging] = useState(false);
  const update = (key: number, change: Partial<Arrival>) =>
    setArrivals((all) => all.map((a) => (a.key === key ? { ...a, ...change } : a)));

  function add(files: Iterable<File>) {
    for (const file of files) {
      const arrival: Arrival = {
        key: nextArrivalKey++,
        name: file.name,
        size: file.size,
        sent: 0,
        jobId: null,
        refused: refusal(file),
      };
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

  const addPage = useMutation({
    mutationFn: (url: string) => addUrl(collectionId, url),
    onSuccess: ({ job_id }, url) => {
      setArrivals((all) => [{ key: nextArrivalKey++, name: url, size: null, sent: 0, jobId: job_id, refused: null }, ...all]);
      onStarted();
    },
  });
  const urlError = fieldError(addPage.error, 'url');

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
        <p>
          Drop PDF, Office, OpenDocument, EPUB, CSV, text, Markdown, HTML, JSON, email or image files here (50 MB each at most),
          or
        </p>
        <FileButton multiple onFiles={add}>
          Choose files
        </FileButton>
      </section>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          const form = event.currentTarget;
          addPage.mutate(String(new FormData(form).get('url')).trim(), { onSuccess: () => form.reset() });
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
        <button type="submit" disabled={addPage.isPending}>
          Add page
        </button>
      </form>
      {!urlError && <Failure error={addPage.error} />}
      <Arrivals arrivals={arrivals} jobs={jobs} />
    </>
  );
}
