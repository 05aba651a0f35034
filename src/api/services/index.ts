import type { Adapters } from '#core/adapters/index.ts';
import { UpstreamError } from '#core/adapters/upstream-error.ts';
import { createAdminRepo } from '#core/db/admin.ts';
import { createApiKeyRepo } from '#core/db/api-keys.ts';
import { createAuditRepo } from '#core/db/audit-log.ts';
import type { Sql } from '#core/db/client.ts';
import { createCollectionRepo } from '#core/db/collections.ts';
import { createDocumentRepo } from '#core/db/documents.ts';
import { createEvaluationRepo } from '#core/db/evaluations.ts';
import { createExchangeRepo } from '#core/db/exchanges.ts';
import { createQuotaRepo } from '#core/db/ingest-quota.ts';
import { createJobRepo } from '#core/db/jobs.ts';
import { createMemberRepo } from '#core/db/members.ts';
import { createSessionRepo } from '#core/db/sessions.ts';
import { createShareRepo } from '#core/db/shares.ts';
import { createPageRepo } from '#core/db/source-pages.ts';
import { createRunRepo } from '#core/db/source-runs.ts';
import { createSourceRepo } from '#core/db/sources.ts';
import { createUsageRepo } from '#core/db/usage.ts';
import { createDeliveryRepo } from '#core/db/webhook-deliveries.ts';
import { createWebhookRepo } from '#core/db/webhooks.ts';
import type { Logger } from '#core/log.ts';
import { checkUrl as checkUrlPolicy, createResolver, DnsError } from '#core/urls/dns.ts';
import { checkReceiverUrl } from '#core/urls/receiver-policy.ts';
import { createAnswerService } from '#retrieval/answer.ts';
import { denseCutoffFor } from '#retrieval/dense-cutoff.ts';
import { queryPrefixFor } from '#retrieval/query-instruction.ts';
import { createRetrievalService } from '#retrieval/retrieval.ts';
import type { Config } from '../config.ts';
import { createAccessService } from './access.ts';
import { createAdminService } from './admin.ts';
import { createApiKeyService } from './api-keys.ts';
import { createAudit, createAuditService, type RequestOrigin } from './audit.ts';
import { createChatService } from './chat.ts';
import { createCollectionService } from './collections.ts';
import type { ServiceDeps } from './deps.ts';
import { createDocumentService } from './documents.ts';
import { createEvalService } from './evals.ts';
import { createIngestService } from './ingest/index.ts';
import { createPurge } from './purge.ts';
import { createSharingService } from './sharing.ts';
import { createSourceService } from './sources.ts';
import { createUsageService } from './usage.ts';
import { createWebhookService } from './webhooks.ts';

/** Everything a request may use, built per request around its database client. */
export function buildServices(sql: Sql, config: Config, adapters: Adapters, origin: RequestOrigin, log: Logger) {
  const collections = createCollectionRepo(sql);
  const auditLog = createAuditRepo(sql);
  const deps: ServiceDeps = {
    ...adapters,
    access: createAccessService(collections),
    audit: createAudit(auditLog, origin, log),
    collections,
    documents: createDocumentRepo(sql),
    evaluations: createEvaluationRepo(sql),
    members: createMemberRepo(sql),
    sessions: createSessionRepo(sql),
    shares: createShareRepo(sql),
  };
  const resolve = createResolver(config.DNS_OVER_HTTPS_URL);
  // Our resolver's outage, not the user's bad URL.
  const resolverDown = (error: unknown) => {
    throw error instanceof DnsError ? new UpstreamError('dns', error.message, { cause: error }) : error;
  };
  // The URL-ingestion address policy, for the pages to ingest.
  const checkUrl = (url: string) =>
    checkUrlPolicy(url, { resolve, trustedOrigins: config.INGEST_TRUSTED_ORIGINS }).catch(resolverDown);
  // The same rules for webhook receivers, with their own trusted origins; ingestion's never admit one.
  const checkReceiver = (url: string) =>
    checkReceiverUrl(url, {
      resolve,
      origins: { webhook: config.WEBHOOK_TRUSTED_ORIGINS, ingest: config.INGEST_TRUSTED_ORIGINS },
    }).catch(resolverDown);
  const retrieval = createRetrievalService({
    ...deps,
    fusion: config.RETRIEVAL_FUSION,
    rerankBudgetMs: config.RERANK_TIMEOUT_MS,
    queryPrefix: queryPrefixFor(config.EMBEDDING_MODEL, config.EMBEDDING_QUERY_PREFIX),
    denseCutoff: denseCutoffFor(config.EMBEDDING_MODEL),
  });
  const purge = createPurge(deps);
  const deliveries = createDeliveryRepo(sql);
  const usage = createUsageRepo(sql);
  const ingest = createIngestService({
    access: deps.access,
    audit: deps.audit,
    documents: deps.documents,
    jobs: createJobRepo(sql),
    deliveries,
    purge,
    quota: createQuotaRepo(sql),
    chunksPerDay: config.INGEST_DAILY_CHUNKS_PER_USER,
    store: adapters.store,
    queue: adapters.queue,
    workerUrl: config.INGEST_WORKER_URL ?? null,
    checkUrl,
    log,
  });
  return {
    access: deps.access,
    apiKeys: createApiKeyService({ keys: createApiKeyRepo(sql), access: deps.access, audit: deps.audit, log }),
    audit: createAuditService({ repo: auditLog, access: deps.access }),
    webhooks: createWebhookService({
      webhooks: createWebhookRepo(sql),
      deliveries,
      access: deps.access,
      audit: deps.audit,
      checkUrl: checkReceiver,
    }),
    collections: createCollectionService(deps),
    documents: createDocumentService({ ...deps, purge }),
    ingest,
    sources: createSourceService({
      access: deps.access,
      audit: deps.audit,
      sources: createSourceRepo(sql),
      runs: createRunRepo(sql),
      pages: createPageRepo(sql),
      documents: deps.documents,
      purge,
      usedToday: createQuotaRepo(sql).usedToday,
      chunksPerDay: config.INGEST_DAILY_CHUNKS_PER_USER,
      queue: adapters.queue,
      workerUrl: config.INGEST_WORKER_URL ?? null,
      checkUrl,
      log,
    }),
    retrieval,
    answer: createAnswerService({
      retrieval,
      sessions: deps.sessions,
      exchanges: createExchangeRepo(sql),
      models: adapters.models,
      queue: adapters.queue,
      scoringUrl: config.SCORING_WORKER_URL ?? null,
      recordUsage: config.USAGE_RECORDING === 'on',
    }),
    usage: createUsageService({
      repo: usage,
      access: deps.access,
      prices: config.MODEL_PRICES,
      tokensPerDay: config.DAILY_TOKENS_PER_USER,
      recording: config.USAGE_RECORDING === 'on',
    }),
    admin: createAdminService({
      repo: createAdminRepo(sql),
      audit: deps.audit,
      queue: adapters.queue,
      workerUrl: config.INGEST_WORKER_URL ?? null,
      qstash: config.QSTASH_TOKEN ? { url: config.QSTASH_URL, token: config.QSTASH_TOKEN } : null,
      prices: config.MODEL_PRICES,
      ingestUrl: (owner, collectionId, url) => ingest.ingestUrl(owner, collectionId, url),
      log,
    }),
    sharing: createSharingService(deps),
    chat: createChatService(deps),
    evals: createEvalService(deps),
  };
}

export type Services = ReturnType<typeof buildServices>;
