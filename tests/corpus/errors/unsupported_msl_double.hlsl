// double: SPIR-V can express it, Metal cannot.
RWStructuredBuffer<double> Values;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Values[id.x] = Values[id.x] * 0.5;
}
