# android_tree.sh: sourced (not run) by tests/tools/android_rules.sh and
# tests/populate/android_linux.sh. Makes an AOSP-like system tree and its
# rules, and the manifest both tests expect, written by hand from the rules.
#
#   android_tree DIR
#       DIR/system: the tree (product out's system/), modes and owners on the
#       host deliberately unlike the rules; DIR/etc/fs_config and
#       DIR/etc/file_contexts: its rules, for mount point /system;
#       DIR/expect.txt: one line per entry of the image,
#       "PATH MODE UID GID CAPABILITY-HEX|- CONTEXT|-", sorted by path.

android_tree() {
  local d=$1
  mkdir -p "$d/system/bin" "$d/system/lib" "$d/system/etc" "$d/system/xbin" "$d/system/apex" "$d/etc"
  printf 'sh\n' > "$d/system/bin/sh"
  printf 'su\n' > "$d/system/bin/su"
  printf 'ping\n' > "$d/system/bin/ping"
  printf 'netd\n' > "$d/system/xbin/netd"
  printf 'libc\n' > "$d/system/lib/libc.so"
  printf '127.0.0.1 localhost\n' > "$d/system/etc/hosts"
  # Two large files, as APEX packages are: 3 MiB that compress well and
  # 2 MiB that compress less, both the same bytes on every run.
  # (Process substitution, not a pipe: the writer's SIGPIPE would fail a
  # caller under pipefail.)
  head -c 3145728 < <(yes 'com.android.runtime: the same line again and again') > "$d/system/apex/com.android.runtime.apex"
  local i
  for i in $(seq 1 32768); do printf '%08x%056d\n' $((i * 2654435761 % 4294967296)) "$i"; done \
    > "$d/system/apex/com.android.art.apex"
  truncate -s 2097152 "$d/system/apex/com.android.art.apex"
  ln -s sh "$d/system/bin/ls"
  ln -s lib "$d/system/lib64"
  chmod 0755 "$d/system"
  chmod 0700 "$d/system/bin" "$d/system/xbin"
  chmod 0600 "$d/system/bin/sh" "$d/system/bin/su" "$d/system/bin/ping" "$d/system/etc/hosts"
  chown -R 4321:4321 "$d/system" 2>/dev/null || true
  # Canned fs_config as the Android build writes it (fs_config -C): paths
  # relative to the mount point, the root as a line that begins with a
  # space, mode octal, capabilities in hex.
  cat > "$d/etc/fs_config" <<'FSC'
 0 0 0755
system/apex 0 0 0755
system/apex/com.android.art.apex 0 0 0644
system/apex/com.android.runtime.apex 0 0 0644
system/bin 0 2000 0751
system/bin/ls 0 2000 0755
system/bin/ping 0 3003 0750 capabilities=0x2000
system/bin/sh 0 2000 0755
system/bin/su 0 2000 04750
system/etc 0 0 0755
system/etc/hosts 1000 1000 0640 selabel=u:object_r:ignored:s0
system/lib 0 0 0755
system/lib/libc.so 0 0 0644
system/lib64 0 0 0644
system/xbin 0 2000 01775
system/xbin/netd 0 2000 02750 capabilities=0x800001400
FSC
  cat > "$d/etc/file_contexts" <<'FC'
/system(/.*)?               u:object_r:system_file:s0
/system/bin/sh          --  u:object_r:shell_exec:s0
/system/bin/ping        --  u:object_r:ping_exec:s0
/system/bin/su          --  u:object_r:su_exec:s0
/system/lib(64)?(/.*)?      u:object_r:system_lib_file:s0
/system/etc/hosts       --  u:object_r:system_hosts_file:s0
FC
  # The image's entries as the rules make them. security.capability:
  # struct vfs_cap_data, le32 magic_etc 0x02000001 (revision 2, effective),
  # then le32 permitted/inheritable for bits 0-31 and 32-63: 0x2000
  # (CAP_NET_RAW) is 00200000 in the first permitted word; 0x800001400
  # (CAP_NET_BIND_SERVICE, CAP_NET_ADMIN, CAP_WAKE_ALARM) is 00140000 and
  # 08000000. The root is the source directory (0755, owner 0:0 without -P)
  # labelled as /system.
  cat > "$d/expect.txt" <<'EXP'
/ drwxr-xr-x 0 0 - u:object_r:system_file:s0
/apex drwxr-xr-x 0 0 - u:object_r:system_file:s0
/apex/com.android.art.apex -rw-r--r-- 0 0 - u:object_r:system_file:s0
/apex/com.android.runtime.apex -rw-r--r-- 0 0 - u:object_r:system_file:s0
/bin drwxr-x--x 0 2000 - u:object_r:system_file:s0
/bin/ls lrwxr-xr-x 0 2000 - u:object_r:system_file:s0
/bin/ping -rwxr-x--- 0 3003 0100000200200000000000000000000000000000 u:object_r:ping_exec:s0
/bin/sh -rwxr-xr-x 0 2000 - u:object_r:shell_exec:s0
/bin/su -rwsr-x--- 0 2000 - u:object_r:su_exec:s0
/etc drwxr-xr-x 0 0 - u:object_r:system_file:s0
/etc/hosts -rw-r----- 1000 1000 - u:object_r:system_hosts_file:s0
/lib drwxr-xr-x 0 0 - u:object_r:system_lib_file:s0
/lib/libc.so -rw-r--r-- 0 0 - u:object_r:system_lib_file:s0
/lib64 lrw-r--r-- 0 0 - u:object_r:system_lib_file:s0
/xbin drwxrwxr-t 0 2000 - u:object_r:system_file:s0
/xbin/netd -rwxr-s--- 0 2000 0100000200140000000000000800000000000000 u:object_r:system_file:s0
EXP
}
