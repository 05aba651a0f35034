import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRef, useState } from 'preact/hooks';
import { messageOf } from '../api.ts';
import { AddDocuments } from '../documents/AddDocuments.tsx';
import { cancelJob, type Doc, documentsIn, documentsKey, type Job, jobsKey, type Metadata } from '../documents/api.ts';
import { DeleteDialog } from '../documents/DeleteDialog.tsx';
import type { RowActions } from '../documents/DocumentRow.tsx';
import { DocumentsTable } from '../documents/DocumentsTable.tsx';
import { deleteDocuments } from '../documents/deleting.ts';
import { FilterBar } from '../documents/FilterBar.tsx';
import { type Filters, listedDocuments, type Sort, shownDocuments, typesOf } from '../documents/filters.ts';
import { plural } from '../documents/format.ts';
import { useJobs } from '../documents/jobs.ts';
import { MetadataDialog } from '../documents/MetadataDialog.tsx';
import { useReplacing } from '../documents/replacing.ts';
import { useSelection } from '../documents/selection.ts';
import { Failure } from '../Failure.tsx';
import '../documents/documents.css';

/**
 * The documents of a collection, or (null) of the caller's personal space. `canWrite` (the owner, or a
 * member with the ingest permission) may add documents and cancel their own jobs; editing, replacing and
 * deleting are the owner's alone, as the API has it, so members with ingest do not see those controls.
 */
export function Documents({ collectionId, canWrite, owner }: { collectionId: string | null; canWrite: boolean; owner: boolean }) {
  const queries = useQueryClient();
  const where = documentsIn(collectionId);
  const manage = canWrite && owner;
  const listed = useQuery({ queryKey: documentsKey(collectionId), queryFn: where.list });
  const jobs = useJobs(collectionId, canWrite);
  const refresh = () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: documentsKey(collectionId) }),
      queries.invalidateQueries({ queryKey: jobsKey(collectionId) }),
    ]);

  const [filters, setFilters] = useState<Filters>({ search: '', type: '', status: 'all' });
  const [sort, setSort] = useState<Sort>({ by: 'date', descending: true });
  const { selection, select } = useSelection();
  const { replacing, replace } = useReplacing(collectionId, refresh);
  const [editing, setEditing] = useState<Doc | null>(null);
  const [doomed, setDoomed] = useState<Doc[]>([]);
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState('');
  const noticeLine = useRef<HTMLParagraphElement>(null);

  const docs = listedDocuments(listed.data ?? [], jobs);
  const shown = shownDocuments(docs, jobs, filters, sort);
  const chosen = docs.filter((doc) => selection.has(doc.id));

  const say = (text: string, failure = '') => {
    setNotice(text);
    setProblem(failure);
  };

  async function saveMetadata(doc: Doc, metadata: Metadata) {
    await where.setMetadata(doc.id, metadata);
    await refresh();
    say(`Saved the metadata of ${doc.name}.`);
  }

  async function cancel(job: Job) {
    try {
      await cancelJob(job);
      say(`Cancelled ${job.source}.`);
    } catch (error) {
      say('', `${job.source} could not be cancelled: ${messageOf(error)}`);
    }
    await refresh();
  }

  async function deleteDoomed() {
    say(`Deleting ${plural(doomed.length, 'document')}…`);
    const outcome = await deleteDocuments(doomed, where.remove);
    select(outcome.deletedIds, false);
    await refresh();
    say(outcome.notice, outcome.problem);
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
      <FilterBar filters={filters} types={typesOf(docs)} onChange={(change) => setFilters((now) => ({ ...now, ...change }))}>
        {manage && (
          <button type="button" class="danger" disabled={chosen.length === 0} onClick={() => setDoomed(chosen)}>
            Delete selected ({chosen.length})
          </button>
        )}
      </FilterBar>
      {listed.isPending && <p>Loading…</p>}
      <Failure error={listed.error} />
      {listed.data && docs.length === 0 && <p>No documents yet.{canWrite && ' Add files or a web page above.'}</p>}
      {docs.length > 0 && (
        <DocumentsTable
          total={docs.length}
          shown={shown}
          jobs={jobs}
          replacing={replacing}
          manage={manage}
          selection={selection}
          select={select}
          sort={sort}
          setSort={setSort}
          actionsOf={actionsOf}
        />
      )}
      <MetadataDialog doc={editing} save={saveMetadata} onClose={() => setEditing(null)} />
      <DeleteDialog doomed={doomed} onConfirm={deleteDoomed} onClose={() => setDoomed([])} />
    </section>
  );
}
