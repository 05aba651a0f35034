import { useMutation } from '@tanstack/preact-query';
import { useRef, useState } from 'preact/hooks';
import { fieldError } from '../api.ts';
import { Failure } from '../Failure.tsx';
import { createSource, type NewSource, type Schedule, type Source } from './api.ts';
import { SCHEDULES } from './format.ts';

const MAX_PAGES = 2000;
const FIELDS = ['url', 'schedule', 'max_pages', 'max_depth', 'include', 'exclude', 'allowed_origins', 'sitemap_url'] as const;
type Field = (typeof FIELDS)[number];

/** A textarea's lines, trimmed, without the empty ones. */
const lines = (value: FormDataEntryValue | null) =>
  String(value ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/** The body the form asks for: the crawl's fields for a site only, each left out when the reader left it empty. */
function bodyOf(data: FormData, kind: Source['kind'], collectionId: string | null): NewSource {
  const body: NewSource = {
    url: String(data.get('url')).trim(),
    kind,
    schedule: (String(data.get('schedule') ?? '') || null) as Schedule,
    ...(collectionId ? { collection_id: collectionId } : {}),
  };
  if (kind !== 'site') return body;
  body.max_pages = Number(data.get('max_pages'));
  body.max_depth = Number(data.get('max_depth'));
  for (const field of ['include', 'exclude', 'allowed_origins'] as const) {
    const given = lines(data.get(field));
    if (given.length > 0) body[field] = given;
  }
  const sitemap = String(data.get('sitemap_url') ?? '').trim();
  if (sitemap) body.sitemap_url = sitemap;
  return body;
}

/** Ties a field to its refusal by the API (when it has one) and its hint. */
const describedBy = (field: Field, error: unknown, hinted = true) => {
  const refused = fieldError(error, field) !== undefined;
  const ids = [refused ? `source-${field}-error` : '', hinted ? `source-${field}-hint` : ''].filter(Boolean);
  return { 'aria-invalid': refused ? true : undefined, 'aria-describedby': ids.length > 0 ? ids.join(' ') : undefined };
};

/** Under a field: why the API refused it, if it did, and what it takes. */
function FieldNote({ field, error, hint }: { field: Field; error: unknown; hint?: string }) {
  const refusal = fieldError(error, field);
  return (
    <>
      {refusal && (
        <span id={`source-${field}-error`} class="error">
          {refusal}
        </span>
      )}
      {hint && (
        <span id={`source-${field}-hint`} class="hint">
          {hint}
        </span>
      )}
    </>
  );
}

/** Adds a site or a single page to keep in sync: its first sync starts at once. */
export function AddSource({ collectionId, onAdded }: { collectionId: string | null; onAdded: (source: Source) => void }) {
  const [kind, setKind] = useState<Source['kind']>('site');
  const advanced = useRef<HTMLDetailsElement>(null);
  const add = useMutation({ mutationFn: createSource, onSuccess: onAdded });
  const named = FIELDS.some((field) => fieldError(add.error, field) !== undefined);

  return (
    <form
      class="stack panel add-source"
      aria-labelledby="add-source-title"
      onSubmit={(event) => {
        event.preventDefault();
        const form = event.currentTarget;
        add.mutate(bodyOf(new FormData(form), kind, collectionId), {
          onSuccess: () => {
            form.reset();
            setKind('site');
          },
          onError: (error) => {
            const field = FIELDS.find((name) => fieldError(error, name));
            if (!field) return;
            // A refused field inside "Advanced" is shown, so that the focus can reach it.
            if (advanced.current && field !== 'url' && field !== 'schedule') advanced.current.open = true;
            form.querySelector<HTMLElement>(`[name="${field}"]`)?.focus();
          },
        });
      }}
    >
      <h2 id="add-source-title">Add a source</h2>
      <div class="stack-tight">
        <label>
          Address
          <input
            name="url"
            type="url"
            required
            maxLength={2048}
            placeholder="https://docs.example.com/"
            {...describedBy('url', add.error)}
          />
        </label>
        <FieldNote
          error={add.error}
          field="url"
          hint="A public web page, or the start of a site. Its pages become documents here."
        />
      </div>
      <fieldset class="row">
        <legend>Keep in sync</legend>
        <label class="check">
          <input type="radio" name="kind" value="site" checked={kind === 'site'} onChange={() => setKind('site')} />
          <span>The site: the pages a crawl from this address finds</span>
        </label>
        <label class="check">
          <input type="radio" name="kind" value="url" checked={kind === 'url'} onChange={() => setKind('url')} />
          <span>This page only</span>
        </label>
      </fieldset>
      <div class="stack-tight">
        <label>
          Sync by itself
          <select name="schedule" {...describedBy('schedule', add.error, false)}>
            {SCHEDULES.map(([value, words]) => (
              <option key={value} value={value}>
                {words}
              </option>
            ))}
          </select>
        </label>
        <FieldNote error={add.error} field="schedule" />
      </div>
      {kind === 'site' && (
        <details ref={advanced} class="advanced-fields">
          <summary>Advanced</summary>
          <div class="stack">
            <div class="row top">
              <div class="stack-tight grow">
                <label>
                  Most pages
                  <input
                    name="max_pages"
                    type="number"
                    min={1}
                    max={MAX_PAGES}
                    defaultValue="200"
                    required
                    {...describedBy('max_pages', add.error)}
                  />
                </label>
                <FieldNote error={add.error} field="max_pages" hint={`Per sync, at most ${MAX_PAGES.toLocaleString('en')}`} />
              </div>
              <div class="stack-tight grow">
                <label>
                  Depth
                  <input
                    name="max_depth"
                    type="number"
                    min={0}
                    max={10}
                    defaultValue="3"
                    required
                    {...describedBy('max_depth', add.error)}
                  />
                </label>
                <FieldNote
                  error={add.error}
                  field="max_depth"
                  hint="Links followed from the address; 0 for it and the sitemap’s pages only"
                />
              </div>
            </div>
            <div class="row top">
              <div class="stack-tight grow">
                <label>
                  Include
                  <textarea name="include" rows={3} placeholder="/docs/*" {...describedBy('include', add.error)} />
                </label>
                <FieldNote
                  error={add.error}
                  field="include"
                  hint="Paths to crawl, one a line (* any run of characters, $ the end); empty: all"
                />
              </div>
              <div class="stack-tight grow">
                <label>
                  Exclude
                  <textarea name="exclude" rows={3} placeholder="/blog/*" {...describedBy('exclude', add.error)} />
                </label>
                <FieldNote error={add.error} field="exclude" hint="Paths never crawled, one a line; they win over Include" />
              </div>
            </div>
            <div class="stack-tight">
              <label>
                Other origins allowed
                <textarea
                  name="allowed_origins"
                  rows={2}
                  placeholder="https://help.example.com"
                  {...describedBy('allowed_origins', add.error)}
                />
              </label>
              <FieldNote
                error={add.error}
                field="allowed_origins"
                hint="One a line; without any, the address’s own origin only"
              />
            </div>
            <div class="stack-tight">
              <label>
                Sitemap
                <input
                  name="sitemap_url"
                  type="url"
                  maxLength={2048}
                  placeholder="https://docs.example.com/sitemap.xml"
                  {...describedBy('sitemap_url', add.error)}
                />
              </label>
              <FieldNote
                error={add.error}
                field="sitemap_url"
                hint="Its pages are crawled too; without it, those robots.txt names"
              />
            </div>
          </div>
        </details>
      )}
      <p>
        <button type="submit" disabled={add.isPending}>
          {add.isPending ? 'Adding…' : 'Add source'}
        </button>
      </p>
      {!named && <Failure error={add.error} />}
    </form>
  );
}
