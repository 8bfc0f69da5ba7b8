{
  "targets": [
    {
      "target_name": "data_path",
      "sources": ["addon.c", "morsel_cipher.c", "socket_low_water.c", "send_file.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2"] }
    }
  ]
}
