#ifndef FREELOADER_DATA_PATH_H
#define FREELOADER_DATA_PATH_H

#include <node_api.h>

/* Throws a TypeError with `message`; returns NULL for the caller to return. */
napi_value fail(napi_env env, const char *message);

napi_value open_morsel(napi_env env, napi_callback_info info);
napi_value seal_morsel(napi_env env, napi_callback_info info);
napi_value set_low_water(napi_env env, napi_callback_info info);
napi_value get_low_water(napi_env env, napi_callback_info info);
napi_value send_file(napi_env env, napi_callback_info info);
napi_value wait_writable(napi_env env, napi_callback_info info);

#endif
