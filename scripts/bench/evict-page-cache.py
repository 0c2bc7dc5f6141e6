#!/usr/bin/env python3
"""Drop the page-cache pages of every file under the given directories (cold-cache benchmarks).

posix_fadvise(POSIX_FADV_DONTNEED) evicts a file's clean cached pages without root (unlike
/proc/sys/vm/drop_caches), so a benchmark can start each run with its inputs on disk only.
Prints the files and bytes evicted and the kernel's page-cache total before and after.

    scripts/bench/evict-page-cache.py DIR [DIR...]
"""
import os
import sys


def page_cache_gb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("Cached:"):
                return int(line.split()[1]) * 1024 / 1e9
    return float("nan")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    before = page_cache_gb()
    files = n_bytes = 0
    for root in sys.argv[1:]:
        for dirpath, _, names in os.walk(root):
            for name in names:
                path = os.path.join(dirpath, name)
                if not os.path.isfile(path):
                    continue
                fd = os.open(path, os.O_RDONLY)
                try:
                    n_bytes += os.fstat(fd).st_size
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)
                files += 1
    print(f"evicted {files} files, {n_bytes / 1e9:.3f} GB; page cache {before:.3f} GB -> {page_cache_gb():.3f} GB")


if __name__ == "__main__":
    main()
