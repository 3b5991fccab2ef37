// A row-major non-float matrix: two rows of int3, 16 bytes apart, as DXC lays it out.
cbuffer Params : register(b0)
{
    row_major int2x3 cells;
    float scale;
};

RWStructuredBuffer<float> results : register(u1);

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    results[id.x] = cells[1][2] * scale;
}
