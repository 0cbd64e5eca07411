{
  "targets": [
    {
      "target_name": "rrscan_mmap",
      "sources": ["mmap.cc"],
      "cflags_cc": ["-std=gnu++17", "-O2", "-Wall", "-Wextra", "-Wno-cast-function-type"],
      "defines": ["NODE_WANT_INTERNALS=0"]
    },
    {
      "target_name": "rrscan_socket",
      "sources": ["socket.cc"],
      "cflags_cc": ["-std=gnu++17", "-O2", "-Wall", "-Wextra", "-Wno-cast-function-type"],
      "defines": ["NODE_WANT_INTERNALS=0"]
    },
    {
      "target_name": "rrscan_http10",
      "sources": ["http10.cc"],
      "cflags_cc": ["-std=gnu++17", "-O2", "-Wall", "-Wextra", "-Wno-cast-function-type"],
      "defines": ["NODE_WANT_INTERNALS=0"]
    },
    {
      "target_name": "rrscan_flock",
      "sources": ["flock.cc"],
      "cflags_cc": ["-std=gnu++17", "-O2", "-Wall", "-Wextra", "-Wno-cast-function-type"],
      "defines": ["NODE_WANT_INTERNALS=0"]
    },
    {
      "target_name": "rrscan_sort",
      "sources": ["sort.cc"],
      "cflags_cc": ["-std=gnu++17", "-O2", "-Wall", "-Wextra", "-Wno-cast-function-type"],
      "defines": ["NODE_WANT_INTERNALS=0"]
    },
    {
      "target_name": "rrscan_trigram",
      "sources": ["trigram.cc"],
      "cflags_cc": ["-std=gnu++17", "-O2", "-Wall", "-Wextra", "-Wno-cast-function-type"],
      "defines": ["NODE_WANT_INTERNALS=0"]
    }
  ]
}
