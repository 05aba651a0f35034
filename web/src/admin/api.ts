import { call, rag, type Schema } from '../api.ts';
import type { UsageWindow } from '../usage/api.ts';

export type Overview = Schema<'AdminOverview'>;
export type AdminUser = Schema<'AdminUser'>;
export type AdminJob = Schema<'AdminJob'>;
export type Retried = Schema<'AdminRetry'>;
export type AuditEntry = Schema<'AuditEntry'>;
export type AuditAction = Schema<'AuditAction'>;
export type JobState = 'stuck' | 'failed';

/** Rows a page of users or jobs holds. */
export const PAGE = 50;
/** The audit entries shown: the latest. */
export const AUDIT_ENTRIES = 20;

export const adminKey = ['admin'];

export const readOverview = () => call(rag.GET('/admin/overview'));

export const listUsers = ({ since, until }: UsageWindow, offset: number, limit = PAGE) =>
  call(rag.GET('/admin/users', { params: { query: { since, until, limit, offset } } }));

export const listJobs = (state: JobState, offset: number) =>
  call(rag.GET('/admin/jobs', { params: { query: { state, limit: PAGE, offset } } }));

export const retryJob = (id: string) => call(rag.POST('/admin/jobs/{id}/retry', { params: { path: { id } } }));

/** The latest entries of everyone (an administrator reads them all), of one action or of every one. */
export const listAudit = (action: AuditAction | '') =>
  call(rag.GET('/audit', { params: { query: { limit: AUDIT_ENTRIES, ...(action ? { action } : {}) } } }));

/** Each audit action in words; a Record, so that an action the API gains is a type error here until it is named. */
export const ACTIONS: Record<AuditAction, string> = {
  'api_key.created': 'API key created',
  'api_key.revoked': 'API key revoked',
  'share.created': 'Invite link created',
  'share.revoked': 'Invite link revoked',
  'share.joined': 'Joined through an invite link',
  'member.removed': 'Member removed',
  'collection.created': 'Collection created',
  'collection.deleted': 'Collection deleted',
  'collection.config_changed': 'Collection settings changed',
  'collection.rechunked': 'Collection re-chunked',
  'webhook.created': 'Webhook created',
  'webhook.updated': 'Webhook changed',
  'webhook.deleted': 'Webhook deleted',
  'webhook.secret_rotated': 'Webhook secret rotated',
  'source.created': 'Source added',
  'source.removed': 'Source removed',
  'document.deleted': 'Document deleted',
  'job.retried': 'Ingestion job retried',
};
