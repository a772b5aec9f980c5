/** `createdAt` → `created_at`: a field's name as the store's columns spell it. */
type SnakeCase<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}`
  : S

/**
 * A row as SQLite hands it back for a record of type `T` whose columns are its fields, one for
 * one, in snake_case. A store whose columns hold something else (JSON, 0/1) writes its row out.
 */
export type Columns<T> = { -readonly [K in keyof T & string as SnakeCase<K>]: T[K] }
