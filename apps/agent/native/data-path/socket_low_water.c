/*
 * A socket's receive low-water mark (SO_RCVLOWAT), which Node has no API for: the reader is
 * woken once that many bytes are queued, not after every packet (see
 * apps/agent/src/native/socket-low-water.ts for why and the measurements).
 *
 * setLowWater(fd, bytes) -> boolean: false when the kernel refused it.
 * getLowWater(fd) -> number: the mark, -1 when it cannot be read.
 */
#include <sys/socket.h>

#include "data_path.h"

napi_value set_low_water(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd, bytes;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
      napi_get_value_int32(env, argv[1], &bytes) != napi_ok || fd < 0 || bytes < 1) {
    return fail(env, "expected (fd, bytes >= 1)");
  }
  int value = bytes;
  napi_value result;
  napi_get_boolean(env, setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &value, sizeof value) == 0, &result);
  return result;
}

/* getLowWater(fd) -> number: the socket's SO_RCVLOWAT, -1 when it cannot be read. */
napi_value get_low_water(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    return fail(env, "expected (fd)");
  }
  int value = 0;
  socklen_t length = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &value, &length) != 0) value = -1;
  napi_value result;
  napi_create_int32(env, value, &result);
  return result;
}

