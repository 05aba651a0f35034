import { call, rag, type Schema } from '../api.ts';

export type Source = Schema<'WebSource'>;
export type SourceRun = Schema<'WebSourceRun'>;
export type RunCounts = Schema<'WebSourceRunCounts'>;
export type SourcePage = Schema<'WebSourcePage'>;
export type NewSource = Schema<'CreateWebSource'>;
export type SourceChange = Schema<'UpdateWebSource'>;
export type Schedule = Schema<'WebSourceSchedule'>;

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
export const listRuns = (id: string) => call(rag.GET('/sources/{id}/runs', { params: { ...path(id), query: { limit: 20 } } }));
export const listPages = (id: string) => call(rag.GET('/sources/{id}/pages', { params: { ...path(id), query: { limit: 200 } } }));

export const isRunning = (run: SourceRun | null | undefined) => run?.status === 'running';
