# Sourced (not run) by scripts/setup/setup.sh and benches/setup.sh: install an
# npm package folder's node_modules from its package-lock.json.
# npm ci runs when node_modules is missing or was installed from another
# package-lock.json (a stamp with the lock file's hash; modification times
# are not compared: checkouts reset them). A node_modules that is a symbolic
# link belongs to someone else and is never reinstalled here.
# Needs a `say` function.
lock_changed() { # dir
  [ "$(cat "$1/node_modules/.grammask-lock.sha256" 2>/dev/null)" != "$(sha256sum < "$1/package-lock.json")" ]
}
npm_ci() { # dir, extra environment assignments...
  local d="$1"; shift
  if [ -L "$d/node_modules" ]; then say "$d/node_modules is a symbolic link: not reinstalled"; return; fi
  (cd "$d" && env "$@" npm ci --no-audit --no-fund)
  sha256sum < "$d/package-lock.json" > "$d/node_modules/.grammask-lock.sha256"
}
