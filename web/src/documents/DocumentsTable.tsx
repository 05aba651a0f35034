import { useEffect, useRef } from 'preact/hooks';
import type { Doc, Job } from './api.ts';
import { DocumentRow, type RowActions } from './DocumentRow.tsx';
import type { Sort } from './filters.ts';
import { plural } from './format.ts';
import type { Replacing } from './replacing.ts';

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

/** The documents shown, of `total` listed; with `manage`, a checkbox that selects all of those shown, and each row's buttons. */
export function DocumentsTable({
  total,
  shown,
  jobs,
  replacing,
  manage,
  selection,
  select,
  sort,
  setSort,
  actionsOf,
}: {
  total: number;
  shown: Doc[];
  jobs: Job[];
  replacing: Record<string, Replacing>;
  manage: boolean;
  selection: Set<string>;
  select: (ids: string[], on: boolean) => void;
  sort: Sort;
  setSort: (sort: Sort) => void;
  actionsOf: (doc: Doc) => RowActions;
}) {
  const selectAll = useRef<HTMLInputElement>(null);
  const allShownChosen = shown.length > 0 && shown.every((doc) => selection.has(doc.id));
  useEffect(() => {
    if (selectAll.current) selectAll.current.indeterminate = !allShownChosen && shown.some((doc) => selection.has(doc.id));
  });
  return (
    <div class="table-scroll">
      <table class="documents-table">
        <caption class="visually-hidden">
          Documents: {shown.length === total ? plural(total, 'document') : `${shown.length} of ${total} shown`}
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
  );
}
