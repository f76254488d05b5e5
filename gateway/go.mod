module github.com/chemmy/chemmy/gateway

go 1.26

require (
	github.com/chemmy/chemmy/proto v0.0.0
	github.com/chemmy/chemmy/services v0.0.0
)

replace (
	github.com/chemmy/chemmy/proto => ../proto
	github.com/chemmy/chemmy/services => ../services
)
