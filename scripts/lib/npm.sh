# Shared by scripts that install pinned npm packages (scripts/install-peers,
# scripts/conformance-install). Source it; it defines functions only.

# Fails with a hint when the machine's node or npm is missing. The machine's Node runs npm
# itself; a package that needs a newer Node pins one in its package.json (the `node` package
# from the npm registry) and puts its node_modules/node/bin first on PATH for its runs.
require_node_npm() {
    local who=$1
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        echo "$who: node and npm are needed (apt-get install nodejs npm)" >&2
        exit 1
    fi
}

# Installs exactly what the committed package-lock.json in directory $1 pins (`npm ci`),
# unless node_modules is already newer than the lock file.
npm_ci_if_stale() {
    local dir=$1
    if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
        (cd "$dir" && npm ci --no-audit --no-fund)
    fi
}
