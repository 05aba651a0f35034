/**
 * What goes before a question when it is embedded. Asymmetric encoders were trained with an instruction
 * on the query side only: BGE's English v1.5 models retrieve best when a short query reads
 * `Represent this sentence for searching relevant passages: <query>`, while passages are embedded as
 * they are. OpenAI's embeddings API has no query/passage field, so the product adds it itself, here,
 * to questions alone; the ingest worker embeds passages bare.
 */
export const BGE_QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';

/** EMBEDDING_QUERY_PREFIX set to this embeds questions bare, whatever the model. */
export const NO_QUERY_PREFIX = 'none';

// bge-small-en-v1.5, @cf/baai/bge-base-en-v1.5, BAAI/bge-large-en: the English BGE models whose model
// cards give the instruction above (the Chinese ones have their own; BGE-M3 needs none).
const BGE_ENGLISH = /(^|[/@:])bge-(small|base|large)-en(-v1\.5)?$/i;

/**
 * The prefix for questions: EMBEDDING_QUERY_PREFIX when set (`none`: no prefix), followed by one space
 * (settings files lose trailing spaces, and every known instruction ends in one: e5's `query: `), else the
 * one the embedding model's card asks for, known by the model's name; '' for models that want none.
 */
export function queryPrefixFor(model: string | undefined, setting: string | undefined): string {
  const given = setting?.trim();
  if (given) return given.toLowerCase() === NO_QUERY_PREFIX ? '' : `${given} `;
  return model && BGE_ENGLISH.test(model.trim()) ? BGE_QUERY_INSTRUCTION : '';
}

/** The text embedded for a question. */
export const queryEmbeddingText = (prefix: string, question: string) => `${prefix}${question}`;
