import type { operations } from '../../../client/index.ts';
import { call, rag } from '../api.ts';

// Named by the operations that answer them rather than by their schema names, which the API may still change
// ('Source' is also the name of a question's cited passage).
type Answer<Op extends keyof operations, Status extends number> =
  operations[Op]['responses'] extends Record<Status, { content: { 'application/json': infer Body } }> ? Body : never;
type Body<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer Given } };
}
  ? Given
  : never;

export type Source = Answer<'getSource', 200>;
// NonNullable: a description may make the registered schema itself nullable, where `last_run` is.
export type SourceRun = NonNullable<Answer<'syncSource', 202>>;
export type RunCounts = SourceRun['counts'];
export type SourcePage = Answer<'listSourcePages', 200>[number];
export type NewSource = Body<'createSource'>;
export type SourceChange = Body<'updateSource'>;
export type Schedule = Source['schedule'];

/** The cached lists, keyed by place (null is the personal space) or by source. */
export const sourcesKey = (collectionId: string | null) => ['sources', collectionId];
export const runsKey = (sourceId: string) => ['source-runs', sourceId];
export const pagesKey = (sourceId: string) => ['source-pages', sourceId];

const path = (id: string) => ({ path: { id } });

export const listSources = (collectionId: string | null) =>
  call(rag.GET('/sources', { params: { query: { collection_id: collectionId ?? 'personal' } } }));
export const createSource = (body: NewSource) => call(rag.POST('/sources', { body }));
export const updateSource = (id: string, body: SourceChange) => call(rag.PATCH('/sources/{id}', { params: path(id), body }));
export const deleteSource = (id: string) => call(rag.DELETE('/sources/{id}', { params: path(id) }));
export const syncSource = (id: string) => call(rag.POST('/sources/{id}/sync', { params: path(id) }));
export const listRuns = (id: string) =>
  call(rag.GET('/sources/{id}/runs', { params: { ...path(id), query: { limit: 20 } } })).then((runs) =>
    runs.filter((run): run is SourceRun => run !== null),
  );
export const listPages = (id: string) => call(rag.GET('/sources/{id}/pages', { params: { ...path(id), query: { limit: 200 } } }));

export const isRunning = (run: SourceRun | null | undefined) => run?.status === 'running';
