import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { call, rag, type Schema } from '../api.ts';
import { Thumb } from '../chat/thumb.tsx';
import { Failure } from '../Failure.tsx';
import { useSession } from '../session.ts';
import './quality.css';

type TrendPoint = Schema<'EvaluationTrendPoint'>;
type RetrievalConfig = Schema<'RetrievalConfig'>;

const PAGE = 20;
const STRATEGIES = ['similarity', 'mmr', 'threshold'] as const satisfies readonly RetrievalConfig['retrieval_strategy'][];
const score = (value: number | null) => (value === null ? '–' : value.toFixed(2));
const ms = (value: number | null) => (value === null ? '–' : `${Math.round(value)} ms`);
const answers = (count: number) => `${count} ${count === 1 ? 'answer' : 'answers'}`;

// Each series' colour is a theme's custom property (quality.css), so that both themes keep their contrast.
const SERIES = [
  { key: 'avg_faithfulness', label: 'Faithfulness', colour: 'series-1' },
  { key: 'avg_context_relevance', label: 'Context relevance', colour: 'series-2' },
] as const satisfies readonly { key: keyof TrendPoint; label: string; colour: string }[];

/** The daily trend as lines from 0 to 1, with the same figures as a table for screen readers. */
function TrendChart({ trend }: { trend: TrendPoint[] }) {
  const [width, height, pad] = [600, 220, 30];
  const x = (i: number) => pad + (trend.length === 1 ? (width - 2 * pad) / 2 : (i * (width - 2 * pad)) / (trend.length - 1));
  const y = (v: number) => height - pad - v * (height - 2 * pad);
  return (
    <figure class="stack">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label="Daily average scores, from 0 to 1" class="chart trend">
        {[0, 0.5, 1].map((v) => (
          <g key={v}>
            <line class="grid" x1={pad} x2={width - pad} y1={y(v)} y2={y(v)} />
            <text x={4} y={y(v) + 4}>
              {v}
            </text>
          </g>
        ))}
        {SERIES.map((series) => {
          const points = trend
            .map((p, i) => [i, p[series.key]] as const)
            .filter((p): p is readonly [number, number] => p[1] !== null);
          return (
            <g key={series.key} data-series={series.key} class={series.colour}>
              <polyline points={points.map(([i, v]) => `${x(i)},${y(v)}`).join(' ')} />
              {points.map(([i, v]) => (
                <circle key={i} cx={x(i)} cy={y(v)} r="3.5" />
              ))}
            </g>
          );
        })}
        {trend.map((p, i) => (
          <text key={p.date} x={x(i)} y={height - 8} text-anchor="middle">
            {p.date.slice(5)}
          </text>
        ))}
      </svg>
      <figcaption class="row">
        {SERIES.map((s) => (
          <span key={s.key}>
            <span class={`swatch ${s.colour}`} /> {s.label}
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

/** What the asker thought of an answer, as a thumb that screen readers read as words; nothing until rated. */
function Rating({ feedback }: { feedback: Schema<'Evaluation'>['feedback'] }) {
  if (!feedback) return null;
  const words = feedback === 'up' ? 'rated up' : 'rated down';
  return (
    <span class="rating" role="img" aria-label={words} title={words}>
      <Thumb down={feedback === 'down'} />
    </span>
  );
}

/** The asker's comment with their rating, shown beside the answer without opening it. */
function RatingComment({ comment }: { comment: string | null }) {
  if (!comment) return null;
  return (
    <blockquote class="wide rating-comment">
      <span class="visually-hidden">Their comment: </span>
      {comment}
    </blockquote>
  );
}

/** Admins only: the collection's chunk size and retrieval strategy. */
function ConfigControl({ collectionId }: { collectionId: string }) {
  const queries = useQueryClient();
  const path = { id: collectionId };
  const config = useQuery({
    queryKey: ['config', collectionId],
    queryFn: () => call(rag.GET('/collections/{id}/config', { params: { path } })),
  });
  const save = useMutation({
    mutationFn: (body: RetrievalConfig) => call(rag.PUT('/collections/{id}/config', { params: { path }, body })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['config', collectionId] }),
  });
  const current = config.data;
  if (!current) return <Failure error={config.error} />;
  return (
    <form
      class="row"
      aria-label="Retrieval settings"
      onSubmit={(event) => {
        event.preventDefault();
        const form = new FormData(event.currentTarget);
        const strategy = STRATEGIES.find((s) => s === form.get('retrieval_strategy'));
        // PUT replaces the whole config: the reranking settings, not on this form, go back as they were.
        save.mutate({
          ...current,
          chunk_size: Number(form.get('chunk_size')),
          retrieval_strategy: strategy ?? current.retrieval_strategy,
        });
      }}
    >
      <label>
        Chunk size (characters)
        <input name="chunk_size" type="number" min={100} max={8000} required defaultValue={String(current.chunk_size)} />
      </label>
      <label>
        Retrieval strategy
        <select name="retrieval_strategy" defaultValue={current.retrieval_strategy}>
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

/**
 * /app/c/:id/quality: the scores' daily trend, latency, what people thought of the answers, the worst answers, and
 * every record, a page at a time; the retrieval settings for admins.
 */
export function Quality({ collectionId, isOwner }: { collectionId: string; isOwner: boolean }) {
  const session = useSession();
  const [offset, setOffset] = useState(0);
  const path = { collection_id: collectionId };
  const stats = useQuery({
    queryKey: ['stats', collectionId],
    queryFn: () => call(rag.GET('/evals/{collection_id}/stats', { params: { path } })),
    refetchInterval: 15_000,
  });
  const records = useQuery({
    queryKey: ['evaluations', collectionId, offset],
    queryFn: () => call(rag.GET('/evals/{collection_id}', { params: { path, query: { limit: PAGE, offset } } })),
  });
  // The worst answers come without their text: it is looked up among the latest records (200, the most a page holds).
  const recent = useQuery({
    queryKey: ['evaluations', collectionId, 'recent'],
    queryFn: () => call(rag.GET('/evals/{collection_id}', { params: { path, query: { limit: 200 } } })),
  });
  const isAdmin = session?.user.app_metadata?.is_admin === true;
  const s = stats.data;

  return (
    <section aria-labelledby="quality-title" class="stack page">
      <h1 id="quality-title">Quality</h1>
      <p>
        {isOwner
          ? 'Every question asked here and its answer, yours and those of the people you share this collection with, who see these records too.'
          : 'Every question asked here and its answer, by anyone in this collection. Its owner and the other members see yours too: ask private questions in a collection of your own.'}
      </p>
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
          <p>
            {s.feedback_up + s.feedback_down === 0
              ? 'Nobody has rated an answer yet.'
              : `People rated ${answers(s.feedback_up)} up and ${s.feedback_down} down.`}
          </p>
          {s.trend.some((p) => p.avg_faithfulness !== null) ? (
            <TrendChart trend={s.trend} />
          ) : (
            <p>Scoring has not finished for any question yet.</p>
          )}
          <h2>Worst answers</h2>
          <p class="hint">Those people rated down come first, then those with the lowest score.</p>
          <ul class="cards" aria-label="Worst answers">
            {s.worst_queries.map((w) => (
              <li key={w.id} class="card">
                <details class="grow">
                  <summary>
                    <Rating feedback={w.feedback} /> {w.question}{' '}
                    <span class="badge">faithfulness {score(w.faithfulness_score)}</span>{' '}
                    <span class="badge">relevance {score(w.context_relevance_score)}</span>
                  </summary>
                  <p class="answer">
                    {recent.data?.find((e) => e.id === w.id)?.answer ?? 'The answer is older than the last 200 records.'}
                  </p>
                </details>
                <RatingComment comment={w.feedback_comment} />
              </li>
            ))}
          </ul>
        </>
      )}
      <h2>Every answer</h2>
      <Failure error={records.error} />
      <ul class="cards" aria-label="Evaluation records">
        {records.data?.map((e) => (
          <li key={e.id} class="card">
            <details class="grow">
              <summary>
                <Rating feedback={e.feedback} /> {e.question} <span class="badge">{new Date(e.created_at).toLocaleString()}</span>{' '}
                <span class="badge">
                  {score(e.faithfulness_score)} / {score(e.context_relevance_score)}
                </span>
              </summary>
              <p class="answer">{e.answer}</p>
            </details>
            <RatingComment comment={e.feedback_comment} />
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
          <h2>Retrieval settings (admins)</h2>
          <ConfigControl collectionId={collectionId} />
        </>
      )}
    </section>
  );
}
