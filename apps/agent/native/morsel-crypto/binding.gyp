{
  "targets": [
    {
      "target_name": "morsel_crypto",
      "sources": ["morsel_crypto.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2"] }
    }
  ]
}
