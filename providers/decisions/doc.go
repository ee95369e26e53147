// Package decisions is bread's "System One": named, fast deciders for
// bounded choices — route this request, classify this ticket, answer yes or
// no. A Decider picks one of the options a Question allows and nothing
// else; a Registry names the deciders a Config offers to agents (through a
// core_decide tool), to pipeline route steps and to hooks.
//
// Two deciders come with the package: ModelDecider asks any
// core.LanguageModel and pins its answer to the options with a JSON Schema
// enum through structured output; HTTPDecider posts the question to a
// classifier service.
package decisions
