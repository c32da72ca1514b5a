/*
 * blob.h: the immutable, content-addressed blob store.
 *
 * A blob is named by the SHA-256 of its original bytes (64 lowercase hex
 * characters), stored zstd-compressed, written once and never overwritten,
 * and verified on every read: the bytes handed back always hash to the key
 * they were asked for, or the read fails.
 *
 * The store is an opaque `blob_store` over a backend. The generic layer
 * here does everything that must not differ between backends (key checks,
 * hashing, compression, bounded decompression, verification), so a backend
 * only moves stored objects (the .zst bytes) around. The local directory is
 * the first backend; an S3-compatible one implements `blob_store_ops` and
 * wraps itself with blob_store_new.
 *
 * Local layout: `<root>/sha256/ab/cdef...zst`, the first two hex characters
 * of the key as a folder, the other 62 plus ".zst" as the file name, mode
 * 0600. Files whose names contain BLOB_TEMP_MARK are writes in progress
 * or that never finished; they are never read as blobs, and
 * blob_store_sweep_temp removes them. A put writes a temporary, syncs it,
 * links it to its name (a link never replaces one) and syncs the folder.
 * A batch writes all its temporaries, syncs the store's filesystem once
 * (syncfs), links them all and syncs it again: two flushes in all, but
 * each also writes out what other programs left unsaved on that
 * filesystem, which the batch then waits for.
 */
#ifndef PR_BLOB_H
#define PR_BLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"

#define BLOB_KEY_HEX 64

/* In the name of every temporary file of the local store. */
#define BLOB_TEMP_MARK ".tmp."

typedef struct blob_store blob_store;

/*
 * Write the SHA-256 of `len` bytes at `data` as 64 lowercase hex
 * characters and a NUL into `out`. Returns 0, or PR_ERR if the digest
 * could not be computed.
 */
int blob_key_of(char out[BLOB_KEY_HEX + 1], const void *data, size_t len);

/* True when `key` is exactly 64 lowercase hex characters (NULL: false). */
bool blob_key_valid(const char *key);

/*
 * Open (creating with mode 0700 if needed) a store in the directory
 * `root`. On success `*out` belongs to the caller (blob_store_free).
 */
int blob_store_open_dir(blob_store **out, const char *root, pr_error *err);

/* Close the backend and free the store; NULL is fine. */
void blob_store_free(blob_store *bs);

/*
 * What the store is, for messages and logs ("dir:/var/lib/profreg/blobs").
 * The string belongs to the store and lives as long as it does.
 */
const char *blob_store_describe(blob_store *bs);

/*
 * Store `len` bytes and write their key into `key_out` (required).
 * `*created` (may be NULL) is set to false when a blob with that key was
 * already there, in which case nothing is written: a stored blob is never
 * replaced, but (local store) its modification time is set to now, so a
 * sweep of unreferenced blobs counts its grace period from the last put;
 * a backend without touch (S3) keeps the time of the first put. A store
 * that can replace objects (the local one) first reads a blob it finds
 * there back and checks it: one that fails its check (truncated, bit rot,
 * written over by hand) is written anew from `data`, so a capture never
 * comes to rest on a damaged blob; `*created` stays false. The store
 * keeps no reference to `data`.
 */
int blob_put(blob_store *bs, char key_out[BLOB_KEY_HEX + 1], const void *data,
	     size_t len, bool *created, pr_error *err);

/* One blob of a batch for blob_put_many. */
typedef struct blob_put_item {
	const void *data;            /* in: the bytes to store (not kept) */
	size_t len;                  /* in: how many */
	char key[BLOB_KEY_HEX + 1];  /* out: their key; in too, when `keyed` */
	bool created;                /* out: as blob_put's `*created` */
	/*
	 * in: `key` already holds what blob_key_of gave for these very bytes
	 * (a caller that hashed them to look them up), so they are not hashed
	 * again. The store takes it on trust: a wrong key stores the bytes
	 * under it, and every read of that blob then fails its check.
	 */
	bool keyed;
	/* out: it was there but failed its check, and was written anew (see blob_put) */
	bool repaired;
} blob_put_item;

/*
 * Store the blobs of items[0..n) as blob_put stores each, filling in each
 * item's key (unless it is `keyed`: a key that is not 64 lowercase hex
 * characters is then PR_EUSAGE) and created flag, and return 0 only once
 * every one of them is durable. The items and the bytes they point to stay the caller's; the
 * store keeps no reference to them. Hashing and compressing run on up to
 * `threads` threads, the caller's included (1: the caller's alone). A
 * backend with put_many (the local store, on Linux 5.8 and later) then
 * gets the whole batch at once and makes it durable with two flushes in
 * all instead of two a blob; a backend without it, or a batch of one,
 * gets one blob_put after another on the same threads, so pass 1 for a
 * backend that must not be called from several threads at once (S3).
 * The same bytes twice in a batch are one blob, and only one of their
 * items is created (with put_many, the first in order).
 *
 * On failure the message is that of the first item, in order, that failed
 * (later items may not have been tried), every created flag is false, and
 * blobs of earlier items may have been stored, unreferenced, for the
 * orphan sweep to collect.
 */
int blob_put_many(blob_store *bs, blob_put_item *items, size_t n, unsigned threads,
		  pr_error *err);

/*
 * Read blob `key` into `out` (its previous contents are dropped, its memory
 * kept for reuse, and its `max` field set to `max`), verifying that the
 * bytes hash to `key`. Reading blob after blob into one buffer costs no new
 * memory once it is large enough. Fails with
 * PR_EUSAGE on a malformed key, PR_ENOTFOUND when it is missing, PR_ELIMIT
 * as soon as it would expand past `max` bytes (a decompression bomb costs
 * at most `max` bytes of memory), PR_EDATA when the stored object is
 * truncated or corrupt. On failure `out` is left empty. The caller owns
 * the contents of `out` (buf_release).
 */
int blob_get(blob_store *bs, const char *key, buf *out, size_t max,
	     pr_error *err);

/* What blob_repair found and did. */
typedef enum blob_repair_outcome {
	BLOB_REPAIR_INTACT,   /* it read back and checked (or, S3, is there): nothing written */
	BLOB_REPAIR_RESTORED, /* it was missing, and is stored again */
	BLOB_REPAIR_REPLACED, /* it failed its check, and was written anew */
} blob_repair_outcome;

/*
 * Make blob `key` hold `data` again: the original bytes a caller has once
 * more (a file ingested a second time). They must hash to `key`, or
 * nothing is written (PR_EUSAGE: a repair never puts other bytes under a
 * key). A store that can replace objects (the local one) reads the blob
 * back and checks it; one that cannot (S3) is only asked whether it is
 * there, since a damaged object could not be replaced anyway and reading
 * it back would download every blob. Missing: put again; damaged: written
 * anew in one step (the old file or the new one, never a mix). *out says
 * which. Errors of the store as for blob_put.
 */
int blob_repair(blob_store *bs, const char *key, const void *data, size_t len,
		blob_repair_outcome *out, pr_error *err);

/* Set `*out` to whether blob `key` is stored. PR_EUSAGE on a bad key. */
int blob_exists(blob_store *bs, const char *key, bool *out, pr_error *err);

/*
 * Remove blob `key`. Removing a blob that is not there succeeds, so a
 * retried delete is harmless. PR_EUSAGE on a bad key.
 */
int blob_delete(blob_store *bs, const char *key, pr_error *err);

/*
 * How long a delete sent to this store may still land after blob_delete
 * failed without an answer (0: never; a local folder's delete is over
 * when it returns). Retention records each delete it sends for that long
 * (db_blob_deletes_mark), and a put under the key's lock in that time is
 * refused (db_blob_delete_doubt): the object it would find, or write, may
 * be removed behind it.
 */
uint64_t blob_delete_linger_us(const blob_store *bs);

/* Bytes blob `key` takes in storage (compressed). PR_ENOTFOUND if missing. */
int blob_stored_size(blob_store *bs, const char *key, uint64_t *out,
		     pr_error *err);

/*
 * Remove what interrupted writes left behind (temporary files older than
 * a minute, so a write in progress is never touched) and set `*removed`
 * (may be NULL) to how many went. A backend without temporaries removes
 * nothing and succeeds.
 */
int blob_store_sweep_temp(blob_store *bs, unsigned *removed, pr_error *err);

/* One stored blob, as a listing or blob_stat sees it. */
typedef struct blob_entry {
	char key[BLOB_KEY_HEX + 1];
	uint64_t size;     /* bytes stored (compressed) */
	int64_t mtime_us;  /* when it was last put (Unix microseconds; see blob_put) */
} blob_entry;

/*
 * Called once per blob by blob_store_list. A negative return (with `err`
 * set) stops the walk, and blob_store_list returns it.
 */
typedef int (*blob_list_fn)(void *ud, const blob_entry *e, pr_error *err);

/*
 * Call `fn` for every blob in the store (the local store in directory
 * order, S3 by key). What is not a blob of the store's layout (another
 * program's object, a temporary file) is skipped. A blob put or deleted
 * while the walk runs may or may not be seen.
 */
int blob_store_list(blob_store *bs, blob_list_fn fn, void *ud, pr_error *err);

/* Size and last-put time of blob `key` into `*out`; PR_ENOTFOUND if missing. */
int blob_stat(blob_store *bs, const char *key, blob_entry *out, pr_error *err);

/*
 * Temporary files that writes in progress or never finished left: how
 * many and their bytes. A backend without temporaries sets both to 0.
 */
int blob_store_temps(blob_store *bs, uint64_t *files, uint64_t *bytes, pr_error *err);

/* The backend's kind: "dir" (the local store) or "s3". Static. */
const char *blob_store_kind(blob_store *bs);

/*
 * Copy blob `key` from `src` into `dst` as stored (no recompression),
 * after checking that it decodes within `max` bytes and hashes to `key`
 * (the errors of blob_get). `*created` (may be NULL) as for blob_put:
 * false when `dst` had it already (it is not replaced, its time is set to
 * now). A copy in `dst` whose size is not the source's and that does not
 * decode to bytes hashing to `key` (cut short) is damaged: the checked
 * source takes its place, and `*created` is true.
 */
int blob_copy(blob_store *dst, blob_store *src, const char *key, size_t max, bool *created,
	      pr_error *err);

/*
 * The stored form, for backends and tools.
 *
 * blob_encode compresses `len` bytes into `out` (released first; the
 * caller owns the result). blob_decode turns a stored object back into
 * the original bytes under the same bounds and checks as blob_get, and
 * names `key` (which must be valid) in its messages.
 */
int blob_encode(buf *out, const void *data, size_t len, pr_error *err);
int blob_decode(buf *out, const char *key, const void *stored, size_t len,
		size_t max, pr_error *err);

/*
 * The backend interface. Every function gets a key already checked by
 * blob_key_valid and works on stored objects, never on original bytes.
 *
 * put:    store `len` bytes under `key` unless an object with that key
 *         exists (then set `*created` to false and change nothing). The
 *         object must appear whole or not at all. blob_put and blob_copy
 *         ask `exists` first; a backend that cannot refuse a replacement
 *         atomically (S3 without conditional writes) relies on that, and
 *         the race it leaves can only write the very same bytes.
 * get:    read the object into `out` (released first), PR_ENOTFOUND when
 *         missing, PR_ELIMIT when it is larger than `max` bytes.
 * exists, del, size: as blob_exists, blob_delete, blob_stored_size.
 * sweep:  may be NULL (nothing to sweep).
 * close:  free `impl`.
 * touch:  set the stored object's modification time to now (blob_put of
 *         a blob already there); PR_ENOTFOUND when it is missing. May be
 *         NULL (the backend keeps no age). Last, so backends written
 *         before it still initialise the others in order.
 * list:   blob_store_list (keys of the layout only).
 * stat:   blob_stat.
 * temps:  blob_store_temps; may be NULL (no temporaries).
 * kind:   a short static name, "dir" or "s3".
 * put_many: put objs[0..n) as put does each, setting `*created` of each
 *         stored object, and return 0 only once all of them are durable;
 *         never make an object's name durable before its bytes. Stop at
 *         the first object, in order, that fails and report it; remove
 *         whatever is half-written. blob_put_many calls exists and touch
 *         of a backend with put_many from several threads at once. May be
 *         NULL (blob_put_many then puts one object after another). After
 *         `kind`, so backends written before it still initialise the
 *         others in order.
 * replace: store `len` bytes under `key` whether or not an object is
 *         there, atomically (readers see the old object or the new one,
 *         whole), durable on return. Only ever called with the stored
 *         form of bytes that hash to `key`, to repair an object that
 *         failed its check. May be NULL (blob_repair then restores only
 *         missing objects, and blob_put does not read back what it finds).
 *         After put_many, for the same reason.
 * delete_linger_us: how long after it was sent a delete that got no
 *         answer (a timeout, a dropped connection) may still reach the
 *         store and remove the object; 0 or NULL where a delete is done
 *         when the call returns (a local folder). After replace.
 */
typedef struct blob_object {
	const char *key;  /* checked by blob_key_valid */
	const void *data; /* the stored form */
	size_t len;
	bool *created;    /* set by put_many: whether the object was written */
} blob_object;

typedef struct blob_store_ops {
	int (*put)(void *impl, const char *key, const void *data, size_t len,
		   bool *created, pr_error *err);
	int (*get)(void *impl, const char *key, buf *out, size_t max,
		   pr_error *err);
	int (*exists)(void *impl, const char *key, bool *out, pr_error *err);
	int (*del)(void *impl, const char *key, pr_error *err);
	int (*size)(void *impl, const char *key, uint64_t *out, pr_error *err);
	int (*sweep)(void *impl, unsigned *removed, pr_error *err);
	void (*close)(void *impl);
	int (*touch)(void *impl, const char *key, pr_error *err);
	int (*list)(void *impl, blob_list_fn fn, void *ud, pr_error *err);
	int (*stat)(void *impl, const char *key, blob_entry *out, pr_error *err);
	int (*temps)(void *impl, uint64_t *files, uint64_t *bytes, pr_error *err);
	const char *kind;
	int (*put_many)(void *impl, const blob_object *objs, size_t n, pr_error *err);
	int (*replace)(void *impl, const char *key, const void *data, size_t len, pr_error *err);
	uint64_t (*delete_linger_us)(void *impl);
} blob_store_ops;

/*
 * Wrap a backend in a store. `ops` must outlive the store; `impl` is
 * handed over (closed with ops->close by blob_store_free, and also here
 * when this call fails); `describe` is copied.
 */
int blob_store_new(blob_store **out, const blob_store_ops *ops, void *impl,
		   const char *describe, pr_error *err);

#endif
