/*
 * A donor's morsel answer straight from the store's file into the client's socket: the head with
 * send(MSG_MORE), the body with sendfile(2), so the body is neither read into a JavaScript buffer
 * nor copied again by writev (see apps/agent/src/native/send-file.ts for why and the numbers).
 *
 * sendFile(sockFd, head, fileFd, position, length, sent, callback)
 *   In a thread-pool thread (a cold page cache would otherwise stall the event loop on a disk
 *   read): sends what is left of head + body from byte `sent` on, until all of it is sent or the
 *   socket's buffer is full. callback(errno, sent): errno 0 (sent may be short: wait for the
 *   socket to be writable, then call again), or the error that stopped it (EPIPE, ECONNRESET;
 *   EIO when the file ends early).
 * waitWritable(sockFd, timeoutMs, callback)
 *   callback(status) once the socket is writable (0), after timeoutMs (1), or with a libuv error
 *   (< 0). Watched on the event loop with uv_poll.
 *
 * Both take their own dup() of the socket (and sendFile of the file) at the call, on the
 * JavaScript thread, and close it when done: if JavaScript closes either meanwhile, its number may
 * be reused, but never under us.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>
#ifdef __linux__
#include <sys/sendfile.h>
#endif

#include "data_path.h"

/* A morsel answer's head is a few hundred bytes (wire.morselResponseHead); a bound keeps a bad
 * caller from asking for a large copy. */
#define MAX_HEAD_BYTES (16 * 1024)

typedef struct {
  napi_async_work work;
  napi_ref callback;
  int sock;
  int file;
  int64_t position;
  int64_t length;
  int64_t sent;
  int error;
  size_t head_length;
  char head[];
} send_job;

static napi_value int_value(napi_env env, int64_t v) {
  napi_value out;
  napi_create_int64(env, v, &out);
  return out;
}

static void send_execute(napi_env env, void *data) {
  (void)env;
  send_job *job = data;
  int64_t total = (int64_t)job->head_length + job->length;
  while (job->sent < total) {
    if (job->sent < (int64_t)job->head_length) {
      ssize_t n = send(job->sock, job->head + job->sent, job->head_length - job->sent,
                       MSG_MORE | MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) job->error = errno;
        return;
      }
      job->sent += n;
      continue;
    }
#ifdef __linux__
    off_t offset = job->position + (job->sent - (int64_t)job->head_length);
    size_t want = (size_t)(total - job->sent);
    ssize_t n = sendfile(job->sock, job->file, &offset, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) job->error = errno;
      return;
    }
    if (n == 0) {
      /* The file ends before the morsel does: never pad a body. */
      job->error = EIO;
      return;
    }
    job->sent += n;
#else
    job->error = ENOSYS;
    return;
#endif
  }
}

static void send_complete(napi_env env, napi_status status, void *data) {
  send_job *job = data;
  close(job->sock);
  close(job->file);
  napi_value callback, global, argv[2];
  if (napi_get_reference_value(env, job->callback, &callback) == napi_ok &&
      napi_get_global(env, &global) == napi_ok) {
    argv[0] = int_value(env, status == napi_ok ? job->error : ECANCELED);
    argv[1] = int_value(env, job->sent);
    napi_call_function(env, global, callback, 2, argv, NULL);
  }
  napi_delete_reference(env, job->callback);
  napi_delete_async_work(env, job->work);
  free(job);
}

napi_value send_file(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  int32_t sock, file;
  int64_t position, length, sent;
  void *head;
  size_t head_length;
  bool is_buffer = false;
  napi_valuetype cb_type = napi_undefined;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 7 ||
      napi_get_value_int32(env, argv[0], &sock) != napi_ok ||
      napi_is_buffer(env, argv[1], &is_buffer) != napi_ok || !is_buffer ||
      napi_get_buffer_info(env, argv[1], &head, &head_length) != napi_ok ||
      napi_get_value_int32(env, argv[2], &file) != napi_ok ||
      napi_get_value_int64(env, argv[3], &position) != napi_ok ||
      napi_get_value_int64(env, argv[4], &length) != napi_ok ||
      napi_get_value_int64(env, argv[5], &sent) != napi_ok ||
      napi_typeof(env, argv[6], &cb_type) != napi_ok || cb_type != napi_function || sock < 0 ||
      file < 0 || position < 0 || length < 0 || sent < 0 || head_length > MAX_HEAD_BYTES ||
      sent > (int64_t)head_length + length) {
    return fail(env, "expected (sockFd, head, fileFd, position, length, sent, callback)");
  }
  send_job *job = calloc(1, sizeof *job + head_length);
  if (job == NULL) return fail(env, "out of memory");
  job->sock = dup(sock);
  job->file = dup(file);
  if (job->sock < 0 || job->file < 0) {
    if (job->sock >= 0) close(job->sock);
    if (job->file >= 0) close(job->file);
    free(job);
    return fail(env, "cannot dup the socket or the file");
  }
  job->position = position;
  job->length = length;
  job->sent = sent;
  job->head_length = head_length;
  memcpy(job->head, head, head_length);
  napi_value name;
  napi_create_string_utf8(env, "freeloader.sendFile", NAPI_AUTO_LENGTH, &name);
  if (napi_create_reference(env, argv[6], 1, &job->callback) != napi_ok ||
      napi_create_async_work(env, NULL, name, send_execute, send_complete, job, &job->work) !=
          napi_ok ||
      napi_queue_async_work(env, job->work) != napi_ok) {
    close(job->sock);
    close(job->file);
    free(job);
    return fail(env, "cannot queue the send");
  }
  return NULL;
}

typedef struct {
  uv_poll_t poll;
  uv_timer_t timer;
  napi_env env;
  napi_ref callback;
  napi_async_context context;
  int fd;
  int status;
  int open_handles;
  bool done;
} wait_job;

static void wait_closed(uv_handle_t *handle) {
  wait_job *job = handle->data;
  if (--job->open_handles > 0) return;
  close(job->fd);
  free(job);
}

static void wait_finish(wait_job *job, int status) {
  if (job->done) return;
  job->done = true;
  uv_poll_stop(&job->poll);
  uv_timer_stop(&job->timer);
  napi_env env = job->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, global, arg;
  if (napi_get_reference_value(env, job->callback, &callback) == napi_ok &&
      napi_get_global(env, &global) == napi_ok) {
    arg = int_value(env, status);
    /* A libuv callback is outside any JavaScript scope: make_callback runs the microtasks (the
     * awaiting promise's continuation) as node's own handles do. */
    napi_make_callback(env, job->context, global, callback, 1, &arg, NULL);
  }
  napi_delete_reference(env, job->callback);
  napi_async_destroy(env, job->context);
  napi_close_handle_scope(env, scope);
  uv_close((uv_handle_t *)&job->poll, wait_closed);
  uv_close((uv_handle_t *)&job->timer, wait_closed);
}

static void on_writable(uv_poll_t *poll, int status, int events) {
  (void)events;
  wait_finish(poll->data, status < 0 ? status : 0);
}

static void on_timeout(uv_timer_t *timer) { wait_finish(timer->data, 1); }

napi_value wait_writable(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  int32_t sock;
  int64_t timeout_ms;
  napi_valuetype cb_type = napi_undefined;
  uv_loop_t *loop = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 3 ||
      napi_get_value_int32(env, argv[0], &sock) != napi_ok ||
      napi_get_value_int64(env, argv[1], &timeout_ms) != napi_ok ||
      napi_typeof(env, argv[2], &cb_type) != napi_ok || cb_type != napi_function || sock < 0 ||
      timeout_ms < 1 || napi_get_uv_event_loop(env, &loop) != napi_ok) {
    return fail(env, "expected (sockFd, timeoutMs >= 1, callback)");
  }
  wait_job *job = calloc(1, sizeof *job);
  if (job == NULL) return fail(env, "out of memory");
  job->env = env;
  /* A second descriptor for the same socket: epoll keys its watches by descriptor, so this
   * watch does not disturb the one libuv keeps for the socket's reads. */
  job->fd = dup(sock);
  if (job->fd < 0) {
    free(job);
    return fail(env, "cannot dup the socket");
  }
  if (uv_poll_init_socket(loop, &job->poll, job->fd) != 0) {
    close(job->fd);
    free(job);
    return fail(env, "cannot watch the socket");
  }
  uv_timer_init(loop, &job->timer);
  job->open_handles = 2;
  job->poll.data = job;
  job->timer.data = job;
  napi_value name;
  napi_create_string_utf8(env, "freeloader.waitWritable", NAPI_AUTO_LENGTH, &name);
  napi_create_reference(env, argv[2], 1, &job->callback);
  napi_async_init(env, NULL, name, &job->context);
  uv_poll_start(&job->poll, UV_WRITABLE | UV_DISCONNECT, on_writable);
  uv_timer_start(&job->timer, on_timeout, (uint64_t)timeout_ms, 0);
  return NULL;
}
