package server

import "github.com/gorilla/mux"

// Mux exposes the server's router, before middleware, to the tests of
// package server_test.
func (s *Server) Mux() *mux.Router { return s.mux }
