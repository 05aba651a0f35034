import { z } from '@hono/zod-openapi';

export const Timestamp = z.string().openapi({ format: 'date-time', example: '2026-11-21T22:33:00.000Z' });
export const Id = z.string().openapi({ format: 'uuid', example: '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f' });
export const Permission = z.enum(['query', 'ingest']).openapi('Permission');

export const pathParam = (name: string, description: string) => z.string().openapi({ param: { name, in: 'path' }, description });

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** A JSON request body; optional only where the route says so. */
export const jsonBody = <T extends z.ZodType>(schema: T, { required = true } = {}) => ({
  required,
  content: { 'application/json': { schema } },
});

export const CollectionParams = z.object({ id: pathParam('id', 'Collection id') });
export const ChatCollectionParams = z.object({ collection_id: pathParam('collection_id', 'Collection id') });
