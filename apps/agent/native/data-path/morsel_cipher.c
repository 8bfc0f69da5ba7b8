/*
 * AES-256-GCM over a morsel in place, for FreeLoader's readers and donors (see
 * apps/agent/src/native/morsel-cipher.ts). node:crypto has no in-place cipher: every update()
 * returns a fresh output buffer, which on a VM where page faults are dear cost 2-9x the cipher
 * itself (allocation, page faults, a copy back, garbage collection). This calls the OpenSSL that
 * Node itself is built with (its symbols are exported to addons), so the bytes are deciphered
 * where they lie and nothing is allocated per morsel.
 *
 * open(key, nonce, aad, data, tag) -> boolean: deciphers data in place; false when the tag does
 *   not match (data then holds neither the ciphertext nor trustworthy plain text).
 * seal(key, nonce, aad, data, tagOut) -> undefined: enciphers data in place, writes the tag.
 * Every argument is a Uint8Array (a Buffer, or a view of a SharedArrayBuffer).
 */
#include <limits.h>
#include <openssl/evp.h>

#include "data_path.h"

#define KEY_BYTES 32
#define NONCE_BYTES 12
#define TAG_BYTES 16

static int bytes_of(napi_env env, napi_value v, unsigned char **data, size_t *length) {
  bool is_typed = false;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok || !is_typed) return 0;
  napi_typedarray_type type;
  size_t count;
  void *base;
  if (napi_get_typedarray_info(env, v, &type, &count, &base, NULL, NULL) != napi_ok) return 0;
  if (type != napi_uint8_array) return 0;
  *data = base;
  *length = count;
  return 1;
}

/* Parses the five arguments both calls take; 0 after throwing. */
static int args_of(napi_env env, napi_callback_info info, unsigned char **key,
                   unsigned char **nonce, unsigned char **aad, size_t *aad_length,
                   unsigned char **data, size_t *data_length, unsigned char **tag) {
  size_t argc = 5;
  napi_value argv[5];
  size_t length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 5) {
    fail(env, "expected (key, nonce, aad, data, tag)");
    return 0;
  }
  if (!bytes_of(env, argv[0], key, &length) || length != KEY_BYTES) {
    fail(env, "key: a Uint8Array of 32 bytes");
    return 0;
  }
  if (!bytes_of(env, argv[1], nonce, &length) || length != NONCE_BYTES) {
    fail(env, "nonce: a Uint8Array of 12 bytes");
    return 0;
  }
  if (!bytes_of(env, argv[2], aad, aad_length) || *aad_length > INT_MAX) {
    fail(env, "aad: a Uint8Array");
    return 0;
  }
  if (!bytes_of(env, argv[3], data, data_length) || *data_length > INT_MAX) {
    fail(env, "data: a Uint8Array under 2 GiB");
    return 0;
  }
  if (!bytes_of(env, argv[4], tag, &length) || length != TAG_BYTES) {
    fail(env, "tag: a Uint8Array of 16 bytes");
    return 0;
  }
  return 1;
}

/* 1 when every step succeeded (for open: the tag matched), 0 otherwise. */
static int run(int encrypt, const unsigned char *key, const unsigned char *nonce,
               const unsigned char *aad, size_t aad_length, unsigned char *data,
               size_t data_length, unsigned char *tag) {
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  int ok = ctx != NULL;
  int n = 0;
  unsigned char last[16];
  ok = ok && EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL, encrypt) == 1;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_BYTES, NULL) == 1;
  ok = ok && EVP_CipherInit_ex(ctx, NULL, NULL, key, nonce, encrypt) == 1;
  if (ok && aad_length > 0) ok = EVP_CipherUpdate(ctx, NULL, &n, aad, (int)aad_length) == 1;
  if (ok && data_length > 0) {
    ok = EVP_CipherUpdate(ctx, data, &n, data, (int)data_length) == 1;
  }
  if (ok && !encrypt) ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_BYTES, tag) == 1;
  ok = ok && EVP_CipherFinal_ex(ctx, last, &n) == 1;
  if (ok && encrypt) ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, tag) == 1;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

napi_value open_morsel(napi_env env, napi_callback_info info) {
  unsigned char *key, *nonce, *aad, *data, *tag;
  size_t aad_length, data_length;
  if (!args_of(env, info, &key, &nonce, &aad, &aad_length, &data, &data_length, &tag)) return NULL;
  napi_value result;
  napi_get_boolean(env, run(0, key, nonce, aad, aad_length, data, data_length, tag), &result);
  return result;
}

napi_value seal_morsel(napi_env env, napi_callback_info info) {
  unsigned char *key, *nonce, *aad, *data, *tag;
  size_t aad_length, data_length;
  if (!args_of(env, info, &key, &nonce, &aad, &aad_length, &data, &data_length, &tag)) return NULL;
  if (!run(1, key, nonce, aad, aad_length, data, data_length, tag)) {
    napi_throw_error(env, "ERR_CRYPTO_OPERATION_FAILED", "AES-256-GCM sealing failed");
  }
  return NULL;
}

