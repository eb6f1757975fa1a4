# Setuid-root programs of /usr: nosuid and no_new_privs keep the jail's user.
su -c id root </dev/null >/dev/null 2>&1 && echo "su worked" || echo "su no"
/usr/bin/passwd -S root >/dev/null 2>&1 && echo "passwd worked" || echo "passwd no"
grep -E "^(Uid|NoNewPrivs)" /proc/self/status | tr -s '\t' ' '
