/* The agent's data-path addon: what Node offers no API for on the read path. */
#include "data_path.h"

napi_value fail(napi_env env, const char *message) {
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", message);
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"open", NULL, open_morsel, NULL, NULL, NULL, napi_enumerable, NULL},
      {"seal", NULL, seal_morsel, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setLowWater", NULL, set_low_water, NULL, NULL, NULL, napi_enumerable, NULL},
      {"getLowWater", NULL, get_low_water, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sendFile", NULL, send_file, NULL, NULL, NULL, napi_enumerable, NULL},
      {"waitWritable", NULL, wait_writable, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, 6, props) != napi_ok) return NULL;
  return exports;
}
