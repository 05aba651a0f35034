-- Time an answer waited for the reranker (src/retrieval/rerank.ts), kept apart from retrieval_latency_ms;
-- null when the question was not reranked (off, no reranking model, or recorded before reranking existed).
alter table evaluations add column rerank_latency_ms integer;
