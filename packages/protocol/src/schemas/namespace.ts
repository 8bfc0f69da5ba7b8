import { Type, type Static } from '@sinclair/typebox';
import { NamespacePath } from './common.js';

/** `POST /api/v1/folders`: create a folder and any missing parents (mkdir -p). */
export const FolderCreate = Type.Object({ path: NamespacePath });
export type FolderCreate = Static<typeof FolderCreate>;

/** `GET /api/v1/datasets/by-path?path=`: a dataset's full namespace path. */
export const PathQuery = Type.Object({ path: NamespacePath });
export type PathQuery = Static<typeof PathQuery>;

/**
 * `DELETE /api/v1/datasets/:id`: `deleted` when the dataset is gone now; otherwise it is
 * `deleting` until every donor has dropped its morsels.
 */
export const DatasetDeleted = Type.Object({ ok: Type.Literal(true), deleted: Type.Boolean() });
export type DatasetDeleted = Static<typeof DatasetDeleted>;
