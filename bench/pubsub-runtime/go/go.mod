module switchboard.dev/bench/pubsub-runtime/gzipgo

go 1.21
