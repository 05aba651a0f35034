import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useEffect, useRef } from 'preact/hooks';
import { documentsKey, type Job, jobsKey, listJobs } from './api.ts';

export const isRunning = (job: Job) => job.status === 'queued' || job.status === 'processing';

/**
 * The caller's own jobs here, every second while one runs. A job that starts or ends adds, changes or removes
 * rows, so the documents are fetched again whenever a job appears or its status changes (not at each chunk: the
 * job carries the progress).
 */
export function useJobs(collectionId: string | null, enabled: boolean) {
  const queries = useQueryClient();
  const jobs = useQuery({
    queryKey: jobsKey(collectionId),
    queryFn: () => listJobs(collectionId),
    enabled,
    refetchInterval: (query) => (query.state.data?.some(isRunning) ? 1000 : false),
  });
  const states = jobs.data?.map((job) => `${job.job_id}:${job.status}`).join() ?? '';
  const seen = useRef<string | null>(null);
  useEffect(() => {
    if (seen.current !== null && seen.current !== states) queries.invalidateQueries({ queryKey: documentsKey(collectionId) });
    seen.current = states;
  }, [states, collectionId, queries]);
  return jobs.data ?? [];
}
