// Package bookstore is the sample target of the reference article: a small
// online-bookstore API built to be load-tested and diagnosed with knee. It
// imports no knee package.
//
// Routes (errors are always JSON {"error": "..."}):
//
//	GET  /api/books/{isbn}      200 Book, 400 malformed ISBN, 404 unknown
//	GET  /api/books?q=&page=    200 SearchPage (PageSize a page), 400 bad page or q
//	POST /api/orders            {isbn, quantity}: 201 Order, 400 bad body, 404, 409 out of stock
//	GET  /healthz               200 {"status":"ok"}, touches no database
//	GET  /metrics               Prometheus text format
//
// Any route may answer 503 {"error":"timeout obtaining a connection from the
// pool"} when no pooled connection came free within Options.PoolTimeout, or
// 503 {"error":"database is busy"} when SQLite stayed locked past its busy
// timeout.
//
// The store is SQLite (modernc.org/sqlite, WAL, busy timeout) unless
// Options.DB is a PostgreSQL DSN; both hold the same SeedBooks books,
// generated deterministically, with ArticleISBNs among them. Every request
// borrows one pooled connection for all its queries. GET 200 responses are
// kept in an output cache keyed by path and query string for
// Options.CacheTTL: add a unique query string (?run=...) to bypass it.
//
// Metrics, each from this server's own registry (the USE probes read them):
//
//	go_sched_latencies_seconds                  histogram: time goroutines waited to run
//	go_sched_pauses_total_gc_seconds            histogram: stop-the-world GC pauses
//	go_gc_pauses_seconds                        histogram: GC pauses (older runtime metric)
//	go_gc_duration_seconds                      summary: GC pause durations
//	go_goroutines, go_memstats_*                the default Go collector set
//	process_cpu_seconds_total                   CPU time; also process_resident_memory_bytes, ...
//	go_sql_max_open_connections{db_name}        pool size (db_name is "sqlite" or "postgres")
//	go_sql_open_connections{db_name}            open connections, in use + idle
//	go_sql_in_use_connections{db_name}          connections held by requests
//	go_sql_idle_connections{db_name}            connections free in the pool
//	go_sql_wait_count_total{db_name}            requests that had to wait for a connection
//	go_sql_wait_duration_seconds_total{db_name} total time spent waiting for one
//	bookstore_db_pool_timeouts_total            requests that got the pool-timeout 503
//	bookstore_db_busy_errors_total              SQLite SQLITE_BUSY/SQLITE_LOCKED errors
//	bookstore_db_queue_waiting                  requests queued for the serialised database
//	bookstore_http_in_flight_requests           requests being served now
//	bookstore_http_request_duration_seconds{route,status}
//	                                            handler time by route pattern ("GET /api/books/{isbn}")
//	bookstore_cache_hits_total                  GET requests served from the cache
//	bookstore_cache_misses_total                GET requests the cache did not hold
//	bookstore_cache_entries                     responses the cache holds
//
// The duration histogram starts when the handler does: time queued in the
// listen backlog or the runtime's scheduler is not in it, which is why the
// article reads it next to the client's numbers.
//
// For the article's "slow database" experiment, Options.QueryDelay makes
// every request sleep while it holds its connection, and
// Options.SerializeQueries lets one request at a time use the database; both
// are off by default.
package bookstore
