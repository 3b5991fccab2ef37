// An append buffer: SPIR-V can express it, WGSL and Metal cannot.
AppendStructuredBuffer<uint> Output;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Output.Append(id.x);
}
