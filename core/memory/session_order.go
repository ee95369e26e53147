package memory

import "github.com/breadai/bread/core"

// sessionOrder lists the stored sessions from the least to the most
// recently updated, linked through the sessions themselves, so the session
// retention finds the ones to drop without scanning and sorting every
// session under the write lock (it did: a sort of every session once per
// a sixteenth of RetainSessions new ones, holding every writer meanwhile).
// A session moves to the newest end whenever its UpdatedAt is touched, so
// the order is the order of the updates. The write lock must be held for
// every method.
type sessionOrder struct {
	oldest, newest *session
}

// add puts a new session at the newest end.
func (o *sessionOrder) add(sess *session) {
	sess.older, sess.newer = o.newest, nil
	if o.newest != nil {
		o.newest.newer = sess
	} else {
		o.oldest = sess
	}
	o.newest = sess
}

// remove takes sess out of the order.
func (o *sessionOrder) remove(sess *session) {
	if sess.older != nil {
		sess.older.newer = sess.newer
	} else if o.oldest == sess {
		o.oldest = sess.newer
	}
	if sess.newer != nil {
		sess.newer.older = sess.older
	} else if o.newest == sess {
		o.newest = sess.older
	}
	sess.older, sess.newer = nil, nil
}

// touch moves sess to the newest end.
func (o *sessionOrder) touch(sess *session) {
	if o.newest == sess {
		return
	}
	o.remove(sess)
	o.add(sess)
}

// addSession stores a new session. The write lock must be held.
func (s *Store) addSession(info core.Session) *session {
	return s.keepSession(&session{info: info})
}

// keepSession stores sess, new, under its id. The write lock must be held.
func (s *Store) keepSession(sess *session) *session {
	sess.seq = s.next()
	s.sessions[sess.info.ID] = sess
	s.order.add(sess)
	return sess
}

// touchSession moves a session's UpdatedAt to now (never back) and makes
// it the most recently updated. The write lock must be held.
func (s *Store) touchSession(sess *session, now int64) {
	sess.info.UpdatedAt = max(sess.info.UpdatedAt, now)
	s.order.touch(sess)
}
