import type { ComponentChildren } from 'preact';
import type { Filters, StatusFilter } from './filters.ts';

/** The search box and the type and status menus; `children` go at the row's end (deleting the selection). */
export function FilterBar({
  filters,
  types,
  onChange,
  children,
}: {
  filters: Filters;
  types: string[];
  onChange: (change: Partial<Filters>) => void;
  children?: ComponentChildren;
}) {
  return (
    <div class="row filters">
      <label class="grow">
        Search documents
        <input
          type="search"
          value={filters.search}
          placeholder="Name, title or metadata"
          onInput={(e) => onChange({ search: e.currentTarget.value })}
        />
      </label>
      <label>
        Type
        <select value={filters.type} onChange={(e) => onChange({ type: e.currentTarget.value })}>
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
        <select value={filters.status} onChange={(e) => onChange({ status: e.currentTarget.value as StatusFilter })}>
          <option value="all">Any status</option>
          <option value="indexed">Indexed</option>
          <option value="running">Being indexed</option>
          <option value="problem">Failed or incomplete</option>
        </select>
      </label>
      {children}
    </div>
  );
}
