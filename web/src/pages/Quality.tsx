import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Failure } from '../Failure.tsx';
import { useSession } from '../session.ts';

interface TrendPoint {
  date: string;
  avg_faithfulness: number | null;
  avg_context_relevance: number | null;
  count: number;
}
interface Stats {
  total_queries: number;
  scored_queries: number;
  avg_faithfulness: number | null;
  avg_context_relevance: number | null;
  avg_total_latency_ms: number | null;
  avg_retrieval_latency_ms: number | null;
  avg_generation_latency_ms: number | null;
  trend: TrendPoint[];
  worst_queries: { id: string; question: string; faithfulness_score: number; context_relevance_score: number }[];
}
interface Evaluation {
  id: string;
  question: string;
  answer: string;
  faithfulness_score: number | null;
  context_relevance_score: number | null;
  total_latency_ms: number;
  created_at: string;
}
interface Config {
  chunk_size: number;
  retrieval_strategy: string;
}

const PAGE = 20;
const STRATEGIES = ['similarity', 'mmr', 'threshold'];
const score = (value: number | null) => (value === null ? '–' : value.toFixed(2));
const ms = (value: number | null) => (value === null ? '–' : `${Math.round(value)} ms`);

const SERIES = [
  { key: 'avg_faithfulness', label: 'Faithfulness', color: '#1f5fbf' },
  { key: 'avg_context_relevance', label: 'Context relevance', color: '#c2410c' },
] as const;

/** The daily trend as lines from 0 to 1, with the same figures as a table for screen readers. */
function TrendChart({ trend }: { trend: TrendPoint[] }) {
  const [width, height, pad] = [600, 220, 30];
  const x = (i: number) => pad + (trend.length === 1 ? (width - 2 * pad) / 2 : (i * (width - 2 * pad)) / (trend.length - 1));
  const y = (v: number) => height - pad - v * (height - 2 * pad);
  return (
    <figure class="stack">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label="Daily average scores, from 0 to 1" class="chart">
        {[0, 0.5, 1].map((v) => (
          <g key={v}>
            <line x1={pad} x2={width - pad} y1={y(v)} y2={y(v)} stroke="#dde2e8" />
            <text x={4} y={y(v) + 4} font-size="11">
              {v}
            </text>
          </g>
        ))}
        {SERIES.map((series) => {
          const points = trend
            .map((p, i) => [i, p[series.key]] as const)
            .filter((p): p is readonly [number, number] => p[1] !== null);
          return (
            <g key={series.key} data-series={series.key}>
              <polyline
                fill="none"
                stroke={series.color}
                stroke-width="2"
                points={points.map(([i, v]) => `${x(i)},${y(v)}`).join(' ')}
              />
              {points.map(([i, v]) => (
                <circle key={i} cx={x(i)} cy={y(v)} r="3.5" fill={series.color} />
              ))}
            </g>
          );
        })}
        {trend.map((p, i) => (
          <text key={p.date} x={x(i)} y={height - 8} font-size="11" text-anchor="middle">
            {p.date.slice(5)}
          </text>
        ))}
      </svg>
      <figcaption class="row">
        {SERIES.map((s) => (
          <span key={s.key}>
            <span class="swatch" style={{ background: s.color }} /> {s.label}
          </span>
        ))}
      </figcaption>
      <details>
        <summary>The figures</summary>
        <table>
          <thead>
            <tr>
              <th>Day</th>
              <th>Faithfulness</th>
              <th>Context relevance</th>
              <th>Questions</th>
            </tr>
          </thead>
          <tbody>
            {trend.map((p) => (
              <tr key={p.date}>
                <td>{p.date}</td>
                <td>{score(p.avg_faithfulness)}</td>
                <td>{score(p.avg_context_relevance)}</td>
                <td>{p.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

/** Admins only: the collection's chunk size and retrieval strategy. */
function ConfigControl({ collectionId }: { collectionId: string }) {
  const queries = useQueryClient();
  const config = useQuery({
    queryKey: ['config', collectionId],
    queryFn: () => api<Config>('GET', `/collections/${collectionId}/config`),
  });
  const save = useMutation({
    mutationFn: (next: Config) => api<Config>('PUT', `/collections/${collectionId}/config`, next),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['config', collectionId] }),
  });
  if (!config.data) return <Failure error={config.error} />;
  return (
    <form
      class="row"
      aria-label="Retrieval settings"
      onSubmit={(event) => {
        event.preventDefault();
        const form = new FormData(event.currentTarget);
        save.mutate({ chunk_size: Number(form.get('chunk_size')), retrieval_strategy: String(form.get('retrieval_strategy')) });
      }}
    >
      <label>
        Chunk size (characters)
        <input name="chunk_size" type="number" min={100} max={8000} required defaultValue={String(config.data.chunk_size)} />
      </label>
      <label>
        Retrieval strategy
        <select name="retrieval_strategy" defaultValue={config.data.retrieval_strategy}>
          {STRATEGIES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={save.isPending}>
        Save settings
      </button>
      {save.isSuccess && <p role="status">Saved. New documents use it; re-chunk to apply a new size to the old ones.</p>}
      <Failure error={save.error} />
    </form>
  );
}

/** Live quality: the scores' daily trend, latency, the worst answers, and every record, a page at a time. */
export function Quality({ collectionId }: { collectionId: string }) {
  const session = useSession();
  const [offset, setOffset] = useState(0);
  const stats = useQuery({
    queryKey: ['stats', collectionId],
    queryFn: () => api<Stats>('GET', `/evals/${collectionId}/stats`),
    refetchInterval: 15_000,
  });
  const records = useQuery({
    queryKey: ['evaluations', collectionId, offset],
    queryFn: () => api<Evaluation[]>('GET', `/evals/${collectionId}?limit=${PAGE}&offset=${offset}`),
  });
  const recent = useQuery({
    queryKey: ['evaluations', collectionId, 'recent'],
    queryFn: () => api<Evaluation[]>('GET', `/evals/${collectionId}?limit=200`),
  });
  const isAdmin = session?.user.app_metadata?.is_admin === true;
  const s = stats.data;

  return (
    <section aria-labelledby="quality-title" class="stack">
      <h2 id="quality-title">Quality</h2>
      <Failure error={stats.error} />
      {s && s.total_queries === 0 && <p>No questions yet: scores appear here once people ask.</p>}
      {s && s.total_queries > 0 && (
        <>
          <dl class="figures">
            <div>
              <dt>Faithfulness</dt>
              <dd>{score(s.avg_faithfulness)}</dd>
            </div>
            <div>
              <dt>Context relevance</dt>
              <dd>{score(s.avg_context_relevance)}</dd>
            </div>
            <div>
              <dt>Answer time</dt>
              <dd>{ms(s.avg_total_latency_ms)}</dd>
            </div>
            <div>
              <dt>Retrieval</dt>
              <dd>{ms(s.avg_retrieval_latency_ms)}</dd>
            </div>
            <div>
              <dt>Generation</dt>
              <dd>{ms(s.avg_generation_latency_ms)}</dd>
            </div>
            <div>
              <dt>Scored</dt>
              <dd>
                {s.scored_queries} of {s.total_queries}
              </dd>
            </div>
          </dl>
          {s.trend.some((p) => p.avg_faithfulness !== null) ? (
            <TrendChart trend={s.trend} />
          ) : (
            <p>Scoring has not finished for any question yet.</p>
          )}
          <h3>Worst answers</h3>
          <ul class="cards" aria-label="Worst answers">
            {s.worst_queries.map((w) => (
              <li key={w.id} class="card">
                <details class="grow">
                  <summary>
                    {w.question} <span class="badge">faithfulness {score(w.faithfulness_score)}</span>{' '}
                    <span class="badge">relevance {score(w.context_relevance_score)}</span>
                  </summary>
                  <p class="answer">
                    {recent.data?.find((e) => e.id === w.id)?.answer ?? 'The answer is older than the last 200 records.'}
                  </p>
                </details>
              </li>
            ))}
          </ul>
        </>
      )}
      <h3>Every answer</h3>
      <ul class="cards" aria-label="Evaluation records">
        {records.data?.map((e) => (
          <li key={e.id} class="card">
            <details class="grow">
              <summary>
                {e.question} <span class="badge">{new Date(e.created_at).toLocaleString()}</span>{' '}
                <span class="badge">
                  {score(e.faithfulness_score)} / {score(e.context_relevance_score)}
                </span>
              </summary>
              <p class="answer">{e.answer}</p>
            </details>
          </li>
        ))}
      </ul>
      <div class="row">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Newer
        </button>
        <button type="button" disabled={(records.data?.length ?? 0) < PAGE} onClick={() => setOffset(offset + PAGE)}>
          Older
        </button>
      </div>
      {isAdmin && (
        <>
          <h3>Retrieval settings (admins)</h3>
          <ConfigControl collectionId={collectionId} />
        </>
      )}
    </section>
  );
}
