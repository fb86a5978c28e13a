// A stdio MCP server written with the TypeScript SDK v2 (@modelcontextprotocol/server,
// pinned in package.json), for zest's clients to drive in 2026-07-28: `echo`; `ask_name`,
// which asks the user for a name through an input-required result (the SDK turns it into an
// elicitation request for a 2025-era client); `ask_model`, which asks the client's model.
//
// Usage: node ts_v2_server.mjs
import { McpServer, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

const NAME_FORM = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

function build() {
    const server = new McpServer({ name: 'ts-v2', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.registerTool(
        'echo',
        { description: 'Returns the text it is given', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] })
    );
    server.registerTool(
        'ask_name',
        { description: "Asks the user's name", inputSchema: z.object({}) },
        async (_args, ctx) => {
            const answer = acceptedContent(ctx.mcpReq.inputResponses, 'name', z.object({ name: z.string() }));
            if (answer === undefined) {
                return inputRequired({
                    inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: NAME_FORM }) }
                });
            }
            return { content: [{ type: 'text', text: `hello ${answer.name}` }] };
        }
    );
    server.registerTool(
        'ask_model',
        { description: "Asks the client's model", inputSchema: z.object({}) },
        async (_args, ctx) => {
            const answer = ctx.mcpReq.inputResponses?.capital;
            if (answer === undefined) {
                const question = { type: 'text', text: 'What is the capital of France?' };
                return inputRequired({
                    inputRequests: {
                        capital: inputRequired.createMessage({ messages: [{ role: 'user', content: question }], maxTokens: 20 })
                    }
                });
            }
            return { content: [{ type: 'text', text: `model says ${answer.content.text}` }] };
        }
    );
    return server;
}

serveStdio(build);
